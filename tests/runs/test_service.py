"""Recorded runs in one process: the record, resume after a pause, re-runs, pinned data."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import nodeloom
from nodeloom import ListSink, RunStatus
from nodeloom.engine.events import CallbackSink
from nodeloom.runs import RunService
from nodeloom.store import RunStateError, Store
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


def marks(log: Path, count: int, seconds: float = 0.0, **extra: object) -> dict:
    """A chain of `count` mark nodes m1 -> m2 -> ... logging to `log`."""
    return chain(
        *(
            node(f"m{i}", "mark", log=str(log), seconds=seconds, **extra)
            for i in range(1, count + 1)
        )
    )


def executions(log: Path) -> list[str]:
    """The node ids that finished executing, one per execution, in order."""
    return log.read_text().split() if log.exists() else []


async def test_a_run_is_recorded_with_its_events_and_a_checkpoint_per_node(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    flow = nodeloom.load(marks(log, 3), registry=registry)
    sink = ListSink()
    result = await service.start(flow, "hi", sink=sink)
    assert result.status is RunStatus.COMPLETED
    record = await store.get_run(result.run_id)
    assert record.status == "completed" and record.steps == 3
    assert record.trigger == {"message": "hi"}
    stored = await store.events(result.run_id)
    assert [e.seq for e in stored] == [e.seq for e in sink.events] == list(range(1, 9))
    assert record.last_seq == 8
    rows = {row.node_id: row for row in await store.node_executions(result.run_id)}
    assert [rows[f"m{i}"].outputs for i in (1, 2, 3)] == [
        {"output": {"n": 1}},
        {"output": {"n": 2}},
        {"output": {"n": 3}},
    ]
    assert rows["m2"].inputs == {"input": {"n": 1}}
    assert all(row.status == "completed" and row.input_hash for row in rows.values())
    assert rows["m1"].side_effects == "idempotent"


async def test_a_paused_run_is_resumed_from_its_record_without_running_finished_nodes(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    document = graph(
        node("m1", "mark", log=str(log)),
        node("ok", "approval", prompt="ship it?"),
        node("m2", "mark", log=str(log)),
        edge("m1", "ok"),
        edge("ok", "m2", "approve"),
    )
    first = await service.start(nodeloom.load(document, registry=registry), "go")
    assert first.status is RunStatus.PAUSED
    assert (await store.get_run(first.run_id)).status == "paused"
    assert executions(log) == ["m1"]

    other = RunService(store, registry)  # as another process would
    try:
        sink = ListSink()
        done = await other.resume(first.run_id, answers={"ok": "yes"}, sink=sink)
    finally:
        await other.aclose()
    assert done.status is RunStatus.COMPLETED, done.error
    assert executions(log) == ["m1", "m2"]
    assert done.outputs["ok"]["decision"]["decision"] == "approve"
    assert "m1" in done.outputs, "a replayed node's outputs are part of the result"
    types = [e.event_type for e in sink.events]
    assert types[0] == "run_resumed" and "started" not in [
        e.event_type for e in sink.events if e.node_id == "ok"
    ]
    stored = await store.events(first.run_id)
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert [e.event_type for e in stored].count("waiting") == 1
    assert (await store.get_run(first.run_id)).status == "completed"


async def test_resuming_a_finished_run_is_refused_and_changes_nothing(
    service: RunService, store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 1), registry=registry)
    result = await service.start(flow)
    before = await store.events(result.run_id)
    with pytest.raises(RunStateError, match="completed"):
        await service.resume(result.run_id)
    assert await store.events(result.run_id) == before


async def test_a_rerun_from_a_node_reuses_the_outputs_upstream(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    flow = nodeloom.load(marks(log, 4), registry=registry)
    first = await service.start(flow)
    log.unlink()
    again = await service.rerun(first.run_id, "m3")
    assert again.status is RunStatus.COMPLETED
    assert executions(log) == ["m3", "m4"]
    assert again.outputs["m4"]["output"] == {"n": 4}
    record = await store.get_run(again.run_id)
    assert (record.rerun_of, record.rerun_from) == (first.run_id, "m3")


async def test_a_pinned_node_is_not_executed_and_its_event_says_so(
    service: RunService, registry, tmp_path: Path
):
    log = tmp_path / "log"
    document = chain(
        node("m1", "mark", log=str(log), pinned={"output": {"n": 40}}),
        node("m2", "mark", log=str(log)),
    )
    sink = ListSink()
    result = await service.start(nodeloom.load(document, registry=registry), sink=sink)
    assert executions(log) == ["m2"]
    assert result.outputs["m2"]["output"] == {"n": 41}
    (completed,) = of_type(sink.events, "completed", "m1")
    assert completed.data["pinned"] is True


async def test_a_pinned_output_must_name_the_nodes_ports(registry, tmp_path: Path):
    document = graph(node("m1", "mark", log="x", pinned={"nope": 1}))
    with pytest.raises(nodeloom.GraphError, match="pinned names port"):
        nodeloom.load(document, registry=registry)


async def interrupted_in_m2(service: RunService, store: Store, registry, log: Path) -> str:
    """A finished run of m1 -> m2 (both external) whose record is made to look as if its
    process died while m2 ran; its id."""
    flow = nodeloom.load(marks(log, 2, side_effects="external"), registry=registry)
    result = await service.start(flow)
    rows = {row.node_id: row for row in await store.node_executions(result.run_id)}
    assert rows["m2"].status == "completed"
    await store.write_batch(
        result.run_id,
        nodes=[{"node_id": "m2", "execution": 1, "status": "started", "outputs": None}],
    )
    await store.update_run(result.run_id, status="interrupted")
    log.unlink()
    return result.run_id


async def test_an_interrupted_external_node_waits_for_a_decision(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    run_id = await interrupted_in_m2(service, store, registry, log)

    paused = await service.resume(run_id)
    assert paused.status is RunStatus.PAUSED
    assert paused.waiting[0]["node_name"] == "m2" and paused.waiting[0]["kind"] == "approval"
    assert executions(log) == []

    done = await service.resume(run_id, answers={"m2": "yes"})
    assert done.status is RunStatus.COMPLETED
    assert executions(log) == ["m2"]


async def test_replay_external_runs_an_interrupted_external_node_again(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    run_id = await interrupted_in_m2(service, store, registry, log)
    done = await service.resume(run_id, replay_external=True)
    assert done.status is RunStatus.COMPLETED
    assert executions(log) == ["m2"]


async def test_rejecting_the_replay_of_an_external_node_fails_it(
    service: RunService, store: Store, registry, tmp_path: Path
):
    run_id = await interrupted_in_m2(service, store, registry, tmp_path / "log")
    await service.resume(run_id)
    failed = await service.resume(run_id, answers={"m2": "no"})
    assert failed.status is RunStatus.FAILED
    assert failed.error["code"] == "external_not_replayed"


async def test_an_answer_for_a_node_not_in_the_graph_is_refused(
    service: RunService, store: Store, registry, tmp_path: Path
):
    run_id = await interrupted_in_m2(service, store, registry, tmp_path / "log")
    with pytest.raises(nodeloom.GraphError, match="Nope"):
        await service.resume(run_id, answers={"Nope": "yes"})
    assert (await store.get_run(run_id)).status == "interrupted"


async def test_a_rerun_from_an_unknown_node_records_nothing(
    service: RunService, store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 2), registry=registry)
    first = await service.start(flow)
    with pytest.raises(nodeloom.GraphError, match="nope"):
        await service.rerun(first.run_id, "nope")
    assert [r.id for r in await store.list_runs()] == [first.run_id]


async def test_cancelling_a_finished_run_is_refused(
    service: RunService, store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 1), registry=registry)
    first = await service.start(flow)
    with pytest.raises(RunStateError, match="can be cancelled"):
        await service.cancel(first.run_id)


async def test_a_paused_run_can_be_cancelled_from_another_service(
    service: RunService, store: Store, registry, tmp_path: Path
):
    document = chain(node("m1", "mark", log=str(tmp_path / "log")), node("ok", "approval"))
    paused = await service.start(nodeloom.load(document, registry=registry))
    other = RunService(store, registry)
    record = await other.cancel(paused.run_id)
    assert record.status == "cancelled"
    events = await store.events(paused.run_id)
    assert events[-1].event_type == "run_cancelled"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_cancelling_a_live_run_returns_once_its_end_is_recorded(
    service: RunService, store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 2, seconds=30), registry=registry)
    started = asyncio.Event()
    sink = CallbackSink(lambda event: started.set() if event.event_type == "started" else None)
    running = asyncio.create_task(service.start(flow, run_id="live", sink=sink))
    await asyncio.wait_for(started.wait(), 10)
    record = await service.cancel("live")
    assert record.status == "cancelled"
    assert (await running).status is RunStatus.CANCELLED
    assert executions(tmp_path / "log") == []


async def test_a_running_run_gets_heartbeats_while_a_node_takes_long(
    store: Store, registry, tmp_path: Path
):
    flow = nodeloom.load(marks(tmp_path / "log", 1, seconds=1.2), registry=registry)
    service = RunService(store, registry, heartbeat=0.3)  # one beat for all its runs
    try:
        task = asyncio.create_task(service.start(flow, "hi"))
        await asyncio.sleep(0.2)
        (run,) = await store.list_runs()
        first = run.heartbeat_at
        await asyncio.sleep(0.7)
        later = (await store.get_run(run.id)).heartbeat_at
        assert first is not None and later is not None and later > first
        assert (await task).status is RunStatus.COMPLETED
    finally:
        await service.aclose()
