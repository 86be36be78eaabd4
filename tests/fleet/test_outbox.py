"""Resume and re-run jobs survive Redis losing its queue: each is recorded in the store's
outbox before it is enqueued, a worker's sweep enqueues again what was not taken, and a
job delivered twice runs once. Real Redis, Postgres, `nodeloom serve --queue` and
`nodeloom worker` processes; the sweep runs every 2 s here (NODELOOM_SWEEP_SECONDS)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections import Counter
from typing import Any

import pytest
import redis

from nodeloom.fleet.broker import QUEUE_NAME, enqueue, make_broker
from nodeloom.fleet.jobs import Job
from nodeloom.store import PendingJobRecord, RunRecord, Store, StoredEvent
from nodeloom.testing.builders import chain, node

from .conftest import Fleet, marks, save, wait_for
from .test_faults import marking, until_running

pytestmark = pytest.mark.slow


def stop(worker: subprocess.Popen[bytes]) -> None:
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=30) == 0


def on_queue(fleet: Fleet) -> int:
    """How many jobs wait on the queue."""
    return int(redis.Redis(port=fleet.redis.port).llen(f"dramatiq:{QUEUE_NAME}"))


def lose_the_queue(fleet: Fleet) -> None:
    """Redis restarted without its data (no persistence): every waiting job is gone."""
    fleet.redis.stop()
    fleet.redis.start()
    assert on_queue(fleet) == 0


def in_store(fleet: Fleet, read: Any) -> Any:
    """`await read(store)` on a store of the test's own."""

    async def go() -> Any:
        store = await Store.open(fleet.database)
        try:
            return await read(store)
        finally:
            await store.close()

    return asyncio.run(go())


def events(fleet: Fleet, run_id: str) -> list[StoredEvent]:
    return in_store(fleet, lambda store: store.events(run_id))


def pending(fleet: Fleet) -> list[PendingJobRecord]:
    return in_store(fleet, lambda store: store.pending_jobs())


def answers_given(fleet: Fleet, run_id: str) -> list[Any]:
    """The answers the run's waiting nodes were resumed with, and how many resumes."""
    stored = events(fleet, run_id)
    given = [e.data.get("input") for e in stored if e.event_type == "resumed"]
    return [given, sum(e.event_type == "run_resumed" for e in stored)]


def test_an_answer_whose_job_redis_lost_resumes_its_run_once_with_that_answer(
    fleet: Fleet, tmp_path
):
    api = fleet.server().client()
    worker = fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(
        api, chain(node("q", "human-input", prompt="Name?"), node("m", "mark", path=str(log)))
    )
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused", fleet=fleet)
    stop(worker)  # no worker takes the answer's job before Redis loses it

    answered = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"q": "Ada"}})
    assert answered.status_code == 202, answered.text
    assert on_queue(fleet) == 1
    [recorded] = pending(fleet)
    assert (recorded.run_id, recorded.kind) == (run_id, "resume")
    lose_the_queue(fleet)

    fleet.worker()  # its sweep enqueues the job again from the outbox
    run = wait_for(api, run_id, "completed", "failed", fleet=fleet)
    assert run["status"] == "completed", run
    assert answers_given(fleet, run_id) == [["Ada"], 1]
    assert Counter(marks(log)) == {f"{run_id} m": 1}
    assert pending(fleet) == []
    assert "Ada" not in fleet.logs()  # an answer is not logged


def test_a_re_run_whose_job_redis_lost_runs_once(fleet: Fleet, tmp_path):
    api = fleet.server().client()
    worker = fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(api, chain(node("a", "mark", path=str(log)), node("b", "mark", path=str(log))))
    source = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, source, "completed", fleet=fleet)
    stop(worker)

    rerun = api.post(f"/api/runs/{source}/rerun", json={"from_node": "b"})
    assert rerun.status_code == 202, rerun.text
    new_run = rerun.json()["run_id"]
    assert on_queue(fleet) == 1
    lose_the_queue(fleet)

    fleet.worker()
    run = wait_for(api, new_run, "completed", "failed", fleet=fleet)
    assert run["status"] == "completed", run
    time.sleep(2.5)  # a sweep more: nothing is left to enqueue again
    runs: list[RunRecord] = in_store(fleet, lambda store: store.list_runs(limit=100))
    assert sorted(r.id for r in runs if r.rerun_of == source) == [new_run]
    expected = {f"{source} a": 1, f"{source} b": 1, f"{new_run} b": 1}
    assert Counter(marks(log)) == expected
    assert pending(fleet) == []


def test_a_resume_delivered_twice_resumes_its_run_once(fleet: Fleet, tmp_path):
    """A sweep's copy of a job still on the queue (its worker was slow to take it): the
    first delivery takes it; the copy, delivered once the run has paused again at a
    later node, does nothing."""
    api = fleet.server().client()
    worker = fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(
        api,
        chain(
            node("q", "human-input", prompt="Name?"),
            node("m", "mark", path=str(log)),
            node("q2", "human-input", prompt="Sure?"),
        ),
    )
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused", fleet=fleet)
    stop(worker)
    answered = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"q": "Ada"}})
    assert answered.status_code == 202, answered.text
    [recorded] = pending(fleet)
    broker = make_broker(fleet.redis.url)
    try:
        enqueue(broker, Job.from_json(recorded.payload))  # what a sweep enqueues
    finally:
        broker.close()
    assert on_queue(fleet) == 2

    fleet.worker("--concurrency", "1")  # one job at a time: the copy comes second
    deadline = time.monotonic() + 60
    while "taken already" not in fleet.logs():
        assert time.monotonic() < deadline, fleet.logs()[-6000:]
        time.sleep(0.1)
    run = wait_for(api, run_id, "paused", fleet=fleet)
    assert [row["node_id"] for row in run["timeline"] if row["status"] == "completed"][:2] == [
        "q",
        "m",
    ]
    assert answers_given(fleet, run_id) == [["Ada"], 1]
    assert Counter(marks(log)) == {f"{run_id} m": 1}
    assert pending(fleet) == []


def test_a_handed_back_runs_resume_survives_redis_losing_its_queue(fleet: Fleet, tmp_path):
    api = fleet.server().client()
    worker = fleet.worker("--grace", "5")
    log = tmp_path / "marks.txt"
    flow_id = save(api, marking(log, slow="m1", seconds=1.0))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    until_running(api, run_id, "m1")
    stop(worker)  # m1 finishes; the run is handed back, its resume recorded and enqueued
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "interrupted"
    [recorded] = pending(fleet)
    assert (recorded.run_id, recorded.kind) == (run_id, "resume")
    lose_the_queue(fleet)

    fleet.worker()
    run = wait_for(api, run_id, "completed", "failed", fleet=fleet)
    assert run["status"] == "completed", run
    assert Counter(marks(log)) == {f"{run_id} m{i}": 1 for i in range(4)}
    assert pending(fleet) == []


def test_a_resume_the_queue_refused_leaves_no_job_to_run_later(fleet: Fleet, tmp_path):
    api = fleet.server().client()
    fleet.worker()
    flow_id = save(api, chain(node("q", "human-input", prompt="Name?")))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused", fleet=fleet)
    fleet.redis.stop()
    refused = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"q": "Ada"}})
    assert refused.status_code == 503, refused.text
    assert pending(fleet) == []  # the client was told nothing changed: no sweep runs it
    fleet.redis.start()
