"""Runs of saved flows: started in the background (202), listed, inspected with their
timeline, cancelled, resumed, re-run; 404 for unknown ids, 409 for the wrong state."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import graph, node

from .conftest import read_frames
from .flows import ask, shout, slow


def save(api: httpx.Client, document: dict[str, Any], name: str = "flow") -> str:
    response = api.post("/api/flows", json={"name": name, "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["flow_id"])


def wait_for(api: httpx.Client, run_id: str, *states: str, within: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}").json()
        if run["status"] in states:
            return dict(run)
        time.sleep(0.05)
    pytest.fail(f"run {run_id} is still {run['status']}, not {states}")


def test_a_run_starts_in_the_background_and_its_timeline_shows_each_node(api: httpx.Client):
    flow_id = save(api, shout())
    started = api.post(f"/api/flows/{flow_id}/runs", json={"message": "hello"})
    assert started.status_code == 202
    accepted = started.json()
    run_id = accepted["run_id"]
    assert accepted["run_url"] == f"/api/runs/{run_id}"
    assert accepted["events_url"] == f"/api/runs/{run_id}/events"

    run = wait_for(api, run_id, "completed")
    assert run["flow_id"] == flow_id and run["flow_version"] == 1
    assert run["trigger"] == {"message": "hello"}
    assert [(row["node_id"], row["status"]) for row in run["timeline"]] == [
        ("start", "completed"),
        ("shout", "completed"),
    ]
    assert run["timeline"][1]["outputs"] == {"output": {"text": "HELLO"}}


def test_a_started_run_is_in_the_store_when_its_start_is_answered(api: httpx.Client):
    # Its creation rides its first write: the answer waits for it (RunService.created).
    flow_id = save(api, slow(2, 1.0))
    accepted = api.post(f"/api/flows/{flow_id}/runs", json={}).json()
    assert accepted["status"] == "running"
    run = api.get(accepted["run_url"])
    assert run.status_code == 200 and run.json()["status"] == "running"
    assert api.post(f"{accepted['run_url']}/cancel").json()["status"] == "cancelled"


def test_runs_are_listed_newest_first_and_filtered(api: httpx.Client):
    flow_id = save(api, shout())
    ids = [
        api.post(f"/api/flows/{flow_id}/runs", json={"message": m, "chat_id": "c1"}).json()[
            "run_id"
        ]
        for m in ("a", "b")
    ]
    for run_id in ids:
        wait_for(api, run_id, "completed")
    listed = api.get("/api/runs", params={"flow_id": flow_id}).json()
    assert [r["id"] for r in listed["runs"]] == ids[::-1]
    assert listed["limit"] == 100 and listed["offset"] == 0
    page = api.get("/api/runs", params={"flow_id": flow_id, "limit": 1, "offset": 1}).json()
    assert [r["id"] for r in page["runs"]] == [ids[0]]
    by_chat = api.get("/api/runs", params={"chat_id": "c1", "status": "completed"}).json()
    assert set(ids) <= {r["id"] for r in by_chat["runs"]}
    none = api.get("/api/runs", params={"flow_id": flow_id, "status": "failed"}).json()
    assert none["runs"] == []


def test_an_unknown_status_filter_is_422(api: httpx.Client):
    response = api.get("/api/runs", params={"status": "sleeping"})
    assert response.status_code == 422
    assert response.json()["error"]["issues"][0]["field"] == "query.status.0"


def test_a_run_of_a_chosen_version(api: httpx.Client):
    flow_id = save(api, slow(1, 0))
    api.put(f"/api/flows/{flow_id}", json={"document": slow(2, 0)})
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={"version": 1}).json()["run_id"]
    run = wait_for(api, run_id, "completed")
    assert run["flow_version"] == 1 and len(run["timeline"]) == 1


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/runs/unknown", None),
        ("GET", "/api/runs/unknown/events", None),
        ("POST", "/api/runs/unknown/cancel", None),
        ("POST", "/api/runs/unknown/resume", {}),
        ("POST", "/api/runs/unknown/rerun", {"from_node": "a"}),
        ("POST", "/api/flows/unknown/runs", {}),
    ],
)
def test_an_unknown_run_or_flow_is_404(api: httpx.Client, method, path, body):
    response = api.request(method, path, json=body)
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"


def test_resuming_or_cancelling_a_completed_run_is_409(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, shout())}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "completed")
    for action in ("resume", "cancel"):
        response = api.post(f"/api/runs/{run_id}/{action}", json={})
        assert response.status_code == 409, response.text
        error = response.json()["error"]
        assert error["code"] == "run_state" and error["status"] == "completed"
        assert "paused" in error["required"]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "completed"


def test_a_paused_run_is_resumed_with_answers(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, ask())}/runs", json={}).json()["run_id"]
    paused = wait_for(api, run_id, "paused")
    assert paused["timeline"][0]["status"] == "waiting"

    resumed = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"q": "Ada"}})
    assert resumed.status_code == 202, resumed.text
    assert resumed.json()["run_id"] == run_id
    done = wait_for(api, run_id, "completed")
    assert done["timeline"][-1]["outputs"] == {"output": {"text": "Ada"}}
    types = [f.data["event_type"] for f in read_frames(api, f"/api/runs/{run_id}/events")]
    assert types[-1] == "run_completed" and "run_paused" in types and "run_resumed" in types


def test_a_running_run_is_cancelled(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, slow(5, 1.0))}/runs", json={}).json()["run_id"]
    cancelled = api.post(f"/api/runs/{run_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    assert frames[-1].event == "run_cancelled"


def test_a_paused_run_is_cancelled(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, ask())}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused")
    assert api.post(f"/api/runs/{run_id}/cancel").json()["status"] == "cancelled"


def test_a_rerun_from_a_node_is_a_new_run(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, slow(3, 0))}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "completed")
    response = api.post(f"/api/runs/{run_id}/rerun", json={"from_node": "s1"})
    assert response.status_code == 202, response.text
    again = response.json()["run_id"]
    assert again != run_id
    run = wait_for(api, again, "completed")
    assert run["rerun_of"] == run_id and run["rerun_from"] == "s1"
    assert [row["node_id"] for row in run["timeline"]] == ["s1", "s2"]


def test_a_rerun_from_an_unknown_node_is_422(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, slow(2, 0))}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "completed")
    response = api.post(f"/api/runs/{run_id}/rerun", json={"from_node": "nope"})
    assert response.status_code == 422, response.text
    assert "nope" in response.json()["error"]["message"]


def code_sleeper(pid_file: Path) -> dict[str, Any]:
    """A Code node that writes its pid and sleeps 30 s."""
    source = (
        "import os, time\n"
        "def main(input, nodes):\n"
        f"    with open({str(pid_file) + '.tmp'!r}, 'w') as f:\n"
        "        f.write(str(os.getpid()))\n"
        f"    os.replace({str(pid_file) + '.tmp'!r}, {str(pid_file)!r})\n"
        "    time.sleep(30)\n"
    )
    return node("sleeper", "code", name="Sleeper", code=source)


def wait_for_file(path: Path) -> int:
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return int(path.read_text())


def assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 1
    while Path(f"/proc/{pid}").exists() and "State:\tZ" not in _status(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.01)


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "State:\tZ"


def test_cancelling_a_run_kills_its_running_code_node_at_once(api: httpx.Client, tmp_path: Path):
    pid_file = tmp_path / "pid"
    flow_id = save(api, graph(code_sleeper(pid_file)))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    pid = wait_for_file(pid_file)
    asked = time.monotonic()
    cancelled = api.post(f"/api/runs/{run_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert time.monotonic() - asked < 1.5
    assert_gone(pid)
    types = [
        (f.data["event_type"], f.data["node_id"])
        for f in read_frames(api, f"/api/runs/{run_id}/events")
    ]
    assert ("completed", "sleeper") not in types and types[-1][0] == "run_cancelled"


def test_a_failing_branch_stops_a_running_code_sibling_at_once(api: httpx.Client, tmp_path: Path):
    pid_file = tmp_path / "pid"
    fail = (
        "import os, time\n"
        "def main(input, nodes):\n"
        f"    while not os.path.exists({str(pid_file)!r}):\n"
        "        time.sleep(0.01)\n"
        "    raise ValueError('boom')\n"
    )
    document = graph(code_sleeper(pid_file), node("bad", "code", name="Bad", code=fail))
    run_id = api.post(f"/api/flows/{save(api, document)}/runs", json={}).json()["run_id"]
    pid = wait_for_file(pid_file)
    run = wait_for(api, run_id, "failed", within=5)
    assert run["error"]["node_id"] == "bad"
    assert_gone(pid)
    frames = [f.data for f in read_frames(api, f"/api/runs/{run_id}/events")]
    [error] = [f for f in frames if f["event_type"] == "error"]
    assert frames[-1]["event_type"] == "run_failed"
    assert frames[-1]["timestamp"] - error["timestamp"] < 1.0
    assert not [f for f in frames if f["event_type"] == "completed" and f["node_id"] == "sleeper"]
