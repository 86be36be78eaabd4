"""Faults in a queue deployment: a worker SIGKILLed mid-run, a worker stopped with
SIGTERM, a run that kills every worker it is given, Redis restarted under load."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import chain, node

from ..server.conftest import read_frames
from .conftest import Fleet, marks, save, wait_for

pytestmark = pytest.mark.slow


def marking(
    log: Path, slow: str = "m1", seconds: float = 4.0, kind: str = "mark"
) -> dict[str, Any]:
    """m0 -> m1 -> m2 -> m3, each appending its line to `log`; `slow` takes `seconds`."""
    return chain(
        *(
            node(
                f"m{i}",
                kind if f"m{i}" == slow else "mark",
                path=str(log),
                seconds=seconds if f"m{i}" == slow else 0.0,
            )
            for i in range(4)
        )
    )


def until_running(api: httpx.Client, run_id: str, node_id: str, within: float = 60) -> int:
    """Wait until `node_id` has started (and every node before it is on record as
    completed); returns the pid of the worker process that runs the run."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}").json()
        started = [row for row in run["timeline"] if row["node_id"] == node_id]
        if run["status"] == "running" and started:
            return int(run["owner"]["pid"])
        time.sleep(0.05)
    raise AssertionError(f"{node_id} of run {run_id} did not start: {run}")


def test_a_worker_killed_mid_run_has_its_run_finished_by_another_with_each_node_once(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    fleet.worker()
    fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    killed = until_running(api, run_id, "m1")
    os.kill(killed, signal.SIGKILL)

    run = wait_for(api, run_id, "completed", "failed", within=90, fleet=fleet)
    assert run["status"] == "completed", run
    assert run["owner"]["pid"] != killed
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}
    # m1, killed while it ran, was taken up again in its own execution row.
    assert [(row["node_id"], row["status"]) for row in run["timeline"]] == [
        (f"m{i}", "completed") for i in range(4)
    ]


def test_an_external_node_interrupted_by_a_kill_waits_for_confirmation_then_runs_once(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log, kind="mark-external"))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    os.kill(until_running(api, run_id, "m1"), signal.SIGKILL)  # the supervisor starts another

    paused = wait_for(api, run_id, "paused", "completed", "failed", within=90, fleet=fleet)
    assert paused["status"] == "paused", paused
    assert marks(log) == [f"{run_id} m0"]
    answered = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"m1": "yes"}})
    assert answered.status_code == 202, answered.text
    run = wait_for(api, run_id, "completed", "failed", within=60, fleet=fleet)
    assert run["status"] == "completed", run
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}


def test_a_run_that_kills_every_worker_is_quarantined_after_three_deliveries(fleet: Fleet):
    api = fleet.server().client()
    fleet.worker()
    flow_id = save(api, chain(node("m0", "sleep", seconds=0.0), node("boom", "die")))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]

    run = wait_for(api, run_id, "failed", "completed", within=110, fleet=fleet)
    assert run["status"] == "failed"
    assert run["error"]["code"] == "run_quarantined"
    assert "delivered to a worker 3 times" in run["error"]["message"]
    assert read_frames(api, f"/api/runs/{run_id}/events")[-1].event == "run_failed"


def test_sigterm_lets_a_run_whose_last_node_runs_end_within_the_grace_period(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    worker = fleet.worker("--grace", "30")
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log, slow="m3", seconds=2.0))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    pid = until_running(api, run_id, "m3")
    worker.send_signal(signal.SIGTERM)

    assert worker.wait(timeout=60) == 0
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "completed"
    assert run["owner"]["pid"] == pid  # the same worker finished it
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}


def test_sigterm_lets_the_running_node_finish_starts_none_after_it_and_hands_back_the_rest(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    worker = fleet.worker("--grace", "5")
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log, slow="m1", seconds=2.0))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    pid = until_running(api, run_id, "m1")
    worker.send_signal(signal.SIGTERM)

    assert worker.wait(timeout=60) == 0
    handed = api.get(f"/api/runs/{run_id}").json()
    assert handed["status"] == "interrupted", handed
    assert handed["error"]["code"] == "handed_back"
    # m1 finished and is on record; m2 never started on the stopped worker.
    assert [(row["node_id"], row["status"]) for row in handed["timeline"]] == [
        ("m0", "completed"),
        ("m1", "completed"),
    ]
    assert marks(log) == [f"{run_id} m0", f"{run_id} m1"]

    fleet.worker()
    run = wait_for(api, run_id, "completed", "failed", within=90, fleet=fleet)
    assert run["status"] == "completed", run
    assert run["owner"]["pid"] != pid
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}
    assert [(row["node_id"], row["status"]) for row in run["timeline"]] == [
        (f"m{i}", "completed") for i in range(4)
    ]


def test_sigterm_lets_a_running_sub_flow_run_to_its_end_and_hands_back_its_parent(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    worker = fleet.worker("--grace", "10")
    log = tmp_path / "marks.txt"
    save(api, marking(log, slow="m1", seconds=2.0), "Child")  # m0 -> m1 (2 s) -> m2 -> m3
    parent = chain(
        node("p0", "mark", path=str(log)),
        node("call", "execute-flow", flow="Child"),
        node("p2", "mark", path=str(log)),
    )
    run_id = api.post(f"/api/flows/{save(api, parent)}/runs", json={}).json()["run_id"]
    deadline = time.monotonic() + 60
    while not any(line.endswith(" m0") for line in marks(log)):  # the child's m1 runs
        assert time.monotonic() < deadline, marks(log)
        time.sleep(0.05)
    worker.send_signal(signal.SIGTERM)

    assert worker.wait(timeout=60) == 0
    handed = api.get(f"/api/runs/{run_id}").json()
    assert handed["status"] == "interrupted", handed
    # The sub-flow is part of the running `call` node: it ran to its end; p2 did not start.
    [child_id] = {line.split()[0] for line in marks(log)} - {run_id}
    assert api.get(f"/api/runs/{child_id}").json()["status"] == "completed"
    assert [row["node_id"] for row in handed["timeline"]] == ["p0", "call"]

    fleet.worker()
    run = wait_for(api, run_id, "completed", "failed", within=90, fleet=fleet)
    assert run["status"] == "completed", run
    expected = {f"{run_id} p0": 1, f"{run_id} p2": 1}
    assert Counter(marks(log)) == expected | {f"{child_id} m{i}": 1 for i in range(4)}


def test_sigterm_hands_back_a_run_the_grace_period_cannot_end_and_another_worker_ends_it(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    worker = fleet.worker("--grace", "0.5")
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log, seconds=6.0))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    pid = until_running(api, run_id, "m1")
    stopping = time.monotonic()
    worker.send_signal(signal.SIGTERM)

    assert worker.wait(timeout=30) == 0
    assert time.monotonic() - stopping < 15
    handed = api.get(f"/api/runs/{run_id}").json()
    assert handed["status"] == "interrupted"
    assert handed["error"]["code"] == "handed_back"
    assert marks(log) == [f"{run_id} m0"]  # m1 was cancelled: it runs again on resume
    fleet.worker()
    run = wait_for(api, run_id, "completed", "failed", within=90, fleet=fleet)
    assert run["status"] == "completed", run
    assert run["owner"]["pid"] != pid
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}


def test_redis_restarted_under_load_loses_no_run_and_runs_none_twice(fleet: Fleet, tmp_path: Path):
    api = fleet.server().client()
    fleet.worker("--concurrency", "4")
    log = tmp_path / "marks.txt"
    flow_id = save(
        api, chain(node("a", "mark", path=str(log), seconds=0.3), node("b", "mark", path=str(log)))
    )
    run_ids: list[str] = []
    for index in range(24):
        if index == 12:  # mid-load: Redis goes away with its queue, and comes back
            fleet.redis.stop()
            time.sleep(1.0)
            fleet.redis.start()
        response = api.post(f"/api/flows/{flow_id}/runs", json={"message": str(index)})
        assert response.status_code == 202, response.text
        run_ids.append(response.json()["run_id"])

    for run_id in run_ids:
        assert wait_for(api, run_id, "completed", within=120, fleet=fleet)["status"] == "completed"
    expected = {f"{run_id} {node_id}": 1 for run_id in run_ids for node_id in ("a", "b")}
    assert Counter(marks(log)) == expected
