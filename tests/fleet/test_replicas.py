"""Servers of a queue deployment: they enqueue, workers run, any replica streams."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nodeloom.testing.builders import chain, node

from ..server.conftest import nodeloom_executable, read_frames, server_environment
from .conftest import Fleet, marks, save, wait_for


def test_serve_with_a_queue_on_sqlite_is_refused_saying_why_and_what_to_set(tmp_path: Path):
    env = {**server_environment(tmp_path), "NODELOOM_QUEUE_URL": "redis://127.0.0.1:1/0"}
    for command in (["serve"], ["worker"]):
        done = subprocess.run(
            [nodeloom_executable(), *command], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done.stderr
        assert "needs the Postgres run store" in done.stderr
        assert "NODELOOM_DATABASE_URL=postgresql://" in done.stderr


@pytest.mark.slow
def test_a_run_started_on_one_replica_is_streamed_live_and_in_order_from_another(
    fleet: Fleet, tmp_path: Path
):
    first, second = fleet.server(), fleet.server()
    fleet.worker("--concurrency", "2")
    log = tmp_path / "marks.txt"
    document = chain(*(node(f"m{i}", "mark", path=str(log), seconds=0.3) for i in range(4)))
    api = first.client()
    flow_id = save(api, document)
    started = api.post(f"/api/flows/{flow_id}/runs", json={"message": "hi"})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    assert started.json()["status"] in ("queued", "running")

    frames = read_frames(second.client(), f"/api/runs/{run_id}/events")
    seqs = [f.id for f in frames]
    assert seqs == list(range(1, len(seqs) + 1))  # every event, once, in order
    assert frames[-1].event == "run_completed"
    assert [f.data["node_id"] for f in frames if f.event == "FlowNodeCompleted"] == [
        "m0",
        "m1",
        "m2",
        "m3",
    ]
    # Resumption from the other replica, exactly as in one process.
    again = read_frames(
        second.client(), f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "3"}
    )
    assert [f.id for f in again] == seqs[3:]
    assert marks(log) == [f"{run_id} m{i}" for i in range(4)]
    assert wait_for(api, run_id, "completed")["status"] == "completed"
