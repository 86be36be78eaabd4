"""A recorded run is created by its first write (docs/store.md, "A run created with its
first write"): a short run is created, recorded and ended in one transaction; nothing
external happens before the run is in the store; a creation that fails fails the run
with its own error and touches no other run; `created()` waits without a write of its
own. On SQLite and on Postgres."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.engine.events import CallbackSink
from nodeloom.runs import RunService, recorder
from nodeloom.store import NotFoundError, Store
from nodeloom.testing.builders import chain, node


def marks(log: Path, count: int, seconds: float = 0.0, **extra: object) -> dict:
    return chain(
        *(
            node(f"m{i}", "mark", log=str(log), seconds=seconds, **extra)
            for i in range(1, count + 1)
        )
    )


def commits(store: Store) -> int:
    return store._committer.batches


async def started(service: RunService, flow: nodeloom.Flow, **arguments: object):
    """Start `flow` in a task; returns (the task, its run id) once its first node started."""
    first: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def seen(event: nodeloom.Event) -> None:
        if event.event_type == "started" and not first.done():
            first.set_result(event.run_id)

    task = asyncio.create_task(service.start(flow, sink=CallbackSink(seen), **arguments))
    return task, await asyncio.wait_for(first, 10)


async def test_a_short_run_is_created_recorded_and_ended_in_one_transaction(
    service: RunService, store: Store, registry, tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(recorder, "WINDOW_SECONDS", 10.0)  # no write while it runs
    flow = nodeloom.load(marks(tmp_path / "log", 3), registry=registry)
    before = commits(store)
    result = await service.start(flow, "hi")
    assert result.status is RunStatus.COMPLETED
    assert commits(store) - before == 1
    stored = await store.get_run(result.run_id)
    events = await store.events(result.run_id)
    assert stored.status == "completed" and stored.last_seq == len(events) == events[-1].seq
    assert [e.status for e in await store.node_executions(result.run_id)] == ["completed"] * 3


async def test_an_external_node_runs_only_once_its_run_is_in_the_store(
    service: RunService, store: Store, registry, tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(recorder, "WINDOW_SECONDS", 10.0)  # only the barrier writes
    log = tmp_path / "log"
    pure = nodeloom.load(marks(log, 1, seconds=30), registry=registry)
    external = nodeloom.load(marks(log, 1, seconds=30, side_effects="external"), registry=registry)
    quiet, quiet_id = await started(service, pure)
    acting, acting_id = await started(service, external)
    await asyncio.sleep(0.2)  # both nodes are running now
    with pytest.raises(NotFoundError):  # a pure node does not wait for the store
        await store.get_run(quiet_id)
    stored = await store.get_run(acting_id)  # the external one waited for it
    assert stored.status == "running"
    (checkpoint,) = await store.node_executions(acting_id)
    assert (checkpoint.node_id, checkpoint.status) == ("m1", "started")
    for run_id, task in ((quiet_id, quiet), (acting_id, acting)):
        assert (await service.cancel(run_id)).status == "cancelled"
        assert (await task).status is RunStatus.CANCELLED


@pytest.mark.parametrize("seconds", [0.0, 0.3], ids=["ended-first", "written-first"])
async def test_a_run_whose_id_is_taken_fails_with_that_error_and_leaves_the_other_alone(
    service: RunService, store: Store, registry, tmp_path: Path, seconds: float
):
    other = await store.create_run(run_id="taken", document={"nodes": [], "edges": []})
    flow = nodeloom.load(marks(tmp_path / "log", 1, seconds=seconds), registry=registry)
    with pytest.raises(ValueError, match="a run with id 'taken' already exists"):
        await service.start(flow, "hi", run_id="taken")
    stored = await store.get_run("taken")
    assert (stored.status, stored.last_seq, stored.created_at) == ("running", 0, other.created_at)
    assert await store.events("taken") == []
    assert service.running() == []


async def test_a_second_start_with_the_id_of_a_live_run_is_refused_at_once(
    service: RunService, store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 1, seconds=30), registry=registry)
    task, run_id = await started(service, flow, run_id="twice")
    with pytest.raises(ValueError, match="a run with id 'twice' already exists"):
        await service.start(flow, "again", run_id="twice")
    assert service.running() == ["twice"] and not task.done()
    assert (await service.cancel(run_id)).status == "cancelled"
    assert (await task).status is RunStatus.CANCELLED


async def test_a_start_of_an_unknown_flow_fails_before_the_run_starts(
    service: RunService, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 1), registry=registry)
    seen: list[nodeloom.Event] = []
    with pytest.raises(NotFoundError, match="no flow with id 'nope'"):
        await service.start(flow, flow_id="nope", sink=CallbackSink(seen.append))
    assert seen == [] and not (tmp_path / "log").exists()


async def test_created_waits_for_the_runs_next_write_and_adds_none(
    service: RunService, store: Store, registry, tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(recorder, "WINDOW_SECONDS", 0.3)
    flow = nodeloom.load(marks(tmp_path / "log", 1, seconds=30), registry=registry)
    task, run_id = await started(service, flow)
    with pytest.raises(NotFoundError):
        await store.get_run(run_id)
    before = commits(store)
    await service.created(run_id)
    assert commits(store) - before == 1  # the write its records were waiting for anyway
    assert (await store.get_run(run_id)).status == "running"
    await service.created(run_id)  # at once now
    await service.created("not-live-here")
    assert (await service.cancel(run_id)).status == "cancelled"
    assert (await task).status is RunStatus.CANCELLED


async def test_a_run_not_written_yet_does_not_cost_the_others_their_heartbeat(
    store: Store, registry, tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(recorder, "WINDOW_SECONDS", 10.0)  # only the barrier writes
    log = tmp_path / "log"
    service = RunService(store, registry, heartbeat=0.2)  # one beat for all its runs
    try:
        written = nodeloom.load(
            marks(log, 1, seconds=30, side_effects="external"), registry=registry
        )
        unwritten = nodeloom.load(marks(log, 1, seconds=30), registry=registry)
        acting, acting_id = await started(service, written)
        quiet, quiet_id = await started(service, unwritten)
        await service.created(acting_id)  # its node's barrier writes it
        first = (await store.get_run(acting_id)).heartbeat_at
        await asyncio.sleep(0.7)  # several beats, each with the unwritten run running here
        with pytest.raises(NotFoundError):
            await store.get_run(quiet_id)
        later = (await store.get_run(acting_id)).heartbeat_at
        assert first is not None and later is not None and later > first
        for run_id, task in ((acting_id, acting), (quiet_id, quiet)):
            assert (await service.cancel(run_id)).status == "cancelled"
            assert (await task).status is RunStatus.CANCELLED
    finally:
        await service.aclose()
