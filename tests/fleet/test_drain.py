"""A worker's run drained (the worker is stopping), in one process on each store: its
running node finishes and is checkpointed, the nodes after it do not start, the run is
recorded `interrupted` (`handed_back`), and its resume runs exactly the nodes left."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import nodeloom
from nodeloom import ListSink, RunStatus
from nodeloom.engine.events import CallbackSink
from nodeloom.fleet.delivery import Deliveries
from nodeloom.fleet.host import WorkerHost
from nodeloom.fleet.jobs import Job
from nodeloom.fleet.service import WorkerRuns
from nodeloom.plugins.registry import Registry
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

from .conftest import FLEET_PACK, Redis, marks


@pytest.fixture
async def runs(store: Store) -> Any:
    registry = Registry.discover(
        paths=[str(FLEET_PACK)], use_entry_points=False, use_environment=False
    )
    service = WorkerRuns(store, registry)
    try:
        yield service
    finally:
        await service.aclose()


def two_marks(log: Path, seconds: float) -> dict[str, Any]:
    """a (takes `seconds`) -> b, each appending "<run id> <node id>" to `log`."""
    return chain(
        node("a", "mark", path=str(log), seconds=seconds), node("b", "mark", path=str(log))
    )


async def test_a_drained_run_finishes_its_running_node_and_its_resume_runs_only_the_rest(
    runs: WorkerRuns, store: Store, tmp_path: Path
):
    log = tmp_path / "marks.txt"
    flow = nodeloom.load(two_marks(log, 0.3), registry=runs.registry)
    drained: list[bool] = []

    def on_event(event: Any) -> None:
        if event.event_type == "started" and event.node_id == "a":
            drained.append(runs.drain(event.run_id))

    result = await runs.start(flow, sink=CallbackSink(on_event))
    assert drained == [True]
    assert result.error is not None and result.error["code"] == "handed_back"
    record = await store.get_run(result.run_id)
    assert record.status == "interrupted" and record.error["code"] == "handed_back"
    rows = await store.node_executions(result.run_id)
    assert [(row.node_id, row.status) for row in rows] == [("a", "completed")]
    assert marks(log) == [f"{result.run_id} a"]

    sink = ListSink()
    resumed = await runs.resume(result.run_id, sink=sink)
    assert resumed.status is RunStatus.COMPLETED
    assert [e.node_id for e in sink.events if e.event_type == "started"] == ["b"]
    assert Counter(marks(log)) == {f"{result.run_id} a": 1, f"{result.run_id} b": 1}
    rows = await store.node_executions(result.run_id)
    assert [(row.node_id, row.status) for row in rows] == [("a", "completed"), ("b", "completed")]


async def test_a_run_handed_back_has_its_running_node_cancelled_at_once(
    runs: WorkerRuns, store: Store, tmp_path: Path
):
    # What a worker does with the runs still running nodes when its grace period ends
    # (the node runs again where the run is resumed: tests/fleet/test_faults.py).
    log = tmp_path / "marks.txt"
    flow = nodeloom.load(two_marks(log, 30.0), registry=runs.registry)
    started = asyncio.Event()

    def on_event(event: Any) -> None:
        if event.event_type == "started" and event.node_id == "a":
            started.set()

    running = asyncio.create_task(runs.start(flow, sink=CallbackSink(on_event)))
    await asyncio.wait_for(started.wait(), 10)
    [run_id] = runs.running()
    await asyncio.wait_for(runs.hand_back(run_id), 5)  # not the 30 s of `a`
    result = await running
    assert result.error is not None and result.error["code"] == "handed_back"
    record = await store.get_run(run_id)
    assert record.status == "interrupted" and record.error["code"] == "handed_back"
    assert marks(log) == []  # `a` was cancelled
    rows = await store.node_executions(run_id)
    assert [(row.node_id, row.status) for row in rows] == [("a", "started")]  # unfinished


async def test_a_run_cancelled_while_it_drains_is_recorded_cancelled(
    runs: WorkerRuns, store: Store, tmp_path: Path
):
    log = tmp_path / "marks.txt"
    flow = nodeloom.load(two_marks(log, 30.0), registry=runs.registry)
    started = asyncio.Event()

    def on_event(event: Any) -> None:
        if event.event_type == "started" and event.node_id == "a":
            runs.drain(event.run_id)
            started.set()

    running = asyncio.create_task(runs.start(flow, sink=CallbackSink(on_event)))
    await asyncio.wait_for(started.wait(), 10)
    [run_id] = runs.running()
    assert (await asyncio.wait_for(runs.cancel(run_id), 5)).status == "cancelled"
    assert (await running).status is RunStatus.CANCELLED
    assert marks(log) == []


async def test_a_run_drained_while_its_last_node_runs_is_recorded_completed(
    runs: WorkerRuns, store: Store, tmp_path: Path
):
    log = tmp_path / "marks.txt"
    flow = nodeloom.load(two_marks(log, 0.0), registry=runs.registry)

    def on_event(event: Any) -> None:
        if event.event_type == "started" and event.node_id == "b":
            runs.drain(event.run_id)

    result = await runs.start(flow, sink=CallbackSink(on_event))
    assert result.status is RunStatus.COMPLETED
    assert (await store.get_run(result.run_id)).status == "completed"


async def test_draining_a_run_that_does_not_run_here_asks_nothing(runs: WorkerRuns):
    assert runs.drain("not-here") is False


async def test_a_job_taken_while_the_worker_stops_is_enqueued_again_neither_counted_nor_run(
    database: str, redis_server: Redis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import redis

    monkeypatch.setenv("NODELOOM_DATA_DIR", str(tmp_path / "data"))
    client = redis.Redis.from_url(redis_server.url)
    enqueued: list[Job] = []
    host = WorkerHost(database, enqueued.append, Deliveries(client), lambda: 0)
    await host.open()
    try:
        assert host.store is not None
        record = await host.store.create_run(document={"nodes": [], "edges": []}, status="queued")
        await host.drain(grace=0)  # nothing runs here: stopped at once
        job = Job.start(record.id)
        host.handle(job.to_json(), on_loop=_never_run)  # as in a Dramatiq thread
        assert enqueued == [job]
        assert (await host.store.get_run(record.id)).status == "queued"
        assert client.get(f"nodeloom:deliveries:{job.job_id}") is None
    finally:
        await host.aclose()
        client.close()


def _never_run(coroutine: Any) -> None:
    coroutine.close()
    raise AssertionError("a job taken while the worker stops is not run")
