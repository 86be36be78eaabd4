"""A Wait through real servers: a run waiting longer than a few seconds is recorded as
paused with its wake time and let go (no task holds it), and the timer service resumes it
on time, also when the server that started it is killed and another takes over."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from nodeloom.testing.builders import chain, node

from .conftest import start_server, stop_server
from .test_runs import save, wait_for


def waits(seconds: float) -> dict:
    return chain(
        node("start", "chat-start"),
        node("pause", "wait", name="Pause", seconds=seconds),
        node("after", "json-transform", name="After", expression='"woke"'),
    )


def elapsed(run: dict) -> float:
    started = datetime.fromisoformat(run["created_at"])
    return (datetime.fromisoformat(run["finished_at"]) - started).total_seconds()


@pytest.mark.slow
def test_a_wait_of_3_s_survives_a_server_restart_in_the_middle_and_resumes_on_time(
    tmp_path: Path,
):
    environment = {"NODELOOM_DATABASE_URL": f"sqlite:///{tmp_path / 'shared.db'}"}
    first = start_server(tmp_path / "a", environment=environment)
    try:
        api = first.client()
        run_id = api.post(f"/api/flows/{save(api, waits(3))}/runs", json={}).json()["run_id"]
        paused = wait_for(api, run_id, "paused", within=2)
        assert paused["status"] == "paused"  # let go: only the store holds it
    finally:
        first.process.kill()  # SIGKILL: nothing is shut down cleanly
        first.process.wait()
        first.close()
    second = start_server(tmp_path / "b", environment=environment)
    up = datetime.now(UTC)
    try:
        api = second.client()
        run = wait_for(api, run_id, "completed", "failed", within=15)
        assert run["status"] == "completed", run
        # On time: at its wake time, or as soon as a server is up again if that is later.
        wake = datetime.fromisoformat(run["created_at"]) + timedelta(seconds=3)
        finished = datetime.fromisoformat(run["finished_at"])
        assert wake <= finished <= max(wake, up) + timedelta(seconds=1.5), (wake, up, finished)
        timeline = api.get(f"/api/runs/{run_id}").json()["timeline"]
        assert any(r["node_id"] == "after" and r["status"] == "completed" for r in timeline)
        # And with the server up all along, a wait of 3 s ends 3 s later.
        flow_id = run["flow_id"]
        again = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
        assert wait_for(api, again, "paused", within=2)["status"] == "paused"
        assert 3.0 <= elapsed(wait_for(api, again, "completed", within=10)) <= 4.5
    finally:
        stop_server(second)


def test_a_short_wait_just_sleeps_and_the_run_never_pauses(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, waits(1))}/runs", json={}).json()["run_id"]
    run = wait_for(api, run_id, "completed", within=10)
    assert 1.0 <= elapsed(run) < 2.5
    assert "run_paused" not in api.get(f"/api/runs/{run_id}/events").text


def test_answering_a_waiting_wait_ends_it_early(api: httpx.Client):
    run_id = api.post(f"/api/flows/{save(api, waits(60))}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused", within=5)
    answered = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"Pause": "go"}})
    assert answered.status_code == 202, answered.text
    assert elapsed(wait_for(api, run_id, "completed", within=10)) < 30
