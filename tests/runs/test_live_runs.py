"""One owner of live runs: a recorded run is known to the RunService that runs it (not to
its Flow), and the service's one poller cancels the runs other processes ask to stop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nodeloom
from nodeloom import RunStatus
from nodeloom.engine.events import CallbackSink
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node


async def test_a_held_paused_run_is_known_to_its_service_and_not_to_its_flow(
    service: RunService, registry, tmp_path: Path
):
    document = chain(node("m1", "mark", log=str(tmp_path / "log")), node("ok", "approval"))
    flow = nodeloom.load(document, registry=registry)
    paused = await service.start(flow, hold=True)
    assert paused.status is RunStatus.PAUSED
    assert service.paused() == [paused.run_id] and service.running() == []
    assert flow.paused() == []
    done = await service.answer(paused.run_id, "ok", "yes")
    assert done.status is RunStatus.COMPLETED
    assert service.paused() == [] and flow.paused() == []


async def test_the_service_cancels_the_one_run_another_process_asked_to_stop(
    service: RunService, store: Store, registry, tmp_path: Path
):
    document = chain(node("m1", "mark", log=str(tmp_path / "log"), seconds=30))
    flow = nodeloom.load(document, registry=registry)
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    def sink(run_id: str) -> CallbackSink:
        return CallbackSink(lambda e: started[run_id].set() if e.event_type == "started" else None)

    runs = {
        run_id: asyncio.create_task(service.start(flow, run_id=run_id, sink=sink(run_id)))
        for run_id in started
    }
    for event in started.values():
        await asyncio.wait_for(event.wait(), 10)
    assert sorted(service.running()) == ["a", "b"]
    for run_id in started:  # in the store (as a server answers POST /runs once it is)
        await service.created(run_id)
    other = RunService(store, registry)  # as another process would
    asked = await other.cancel("a")
    assert asked.status == "running" and asked.cancel_requested_at is not None
    await asyncio.wait({runs["a"]}, timeout=3)  # polled every 0.5 s
    assert runs["a"].done(), "the run asked to stop still runs"
    assert runs["a"].result().status is RunStatus.CANCELLED
    assert (await store.get_run("a")).status == "cancelled"
    assert service.running() == ["b"] and not runs["b"].done()
    assert (await service.cancel("b")).status == "cancelled"
    assert (await runs["b"]).status is RunStatus.CANCELLED
    await other.aclose()
