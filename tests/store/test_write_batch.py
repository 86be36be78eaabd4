"""The engine's checkpoint writer: `write_batch` writes events, checkpoints and run fields
in one transaction, on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from nodeloom.plugins.contract import Event
from nodeloom.store import NotFoundError, Store

CountRows = Callable[[str], Awaitable[int]]  # the count_rows fixture (conftest)
BIG = "x" * 300_000  # over the default 256 KB threshold
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def node_events(run_id: str, node: str, seq: int, outputs: Any = None) -> list[Event]:
    """A node's `started` (seq) and `completed` (seq + 1) events."""
    completed = {"outputs": outputs if outputs is not None else {"output": {"n": seq}}}
    return [
        Event("started", None, node, node.upper(), "set", run_id, seq, 1_700_000_000.0 + seq),
        Event("completed", completed, node, node.upper(), "set", run_id, seq + 1, 1.7e9 + seq),
    ]


def node_changes(node: str, inputs: Any, outputs: Any, **completed: Any) -> list[dict[str, Any]]:
    """A node's `started` and `completed` checkpoint changes."""
    return [
        {"node_id": node, "execution": 1, "status": "started", "node_name": node.upper(),
         "node_type": "set", "inputs": inputs, "side_effects": "pure", "started_at": T0},
        {"node_id": node, "execution": 1, "status": "completed", "outputs": outputs,
         **completed},
    ]  # fmt: skip


def blob_files(store: Store) -> list[Path]:
    if not store.blob_dir.exists():
        return []
    return [p for p in store.blob_dir.rglob("*") if p.is_file() and p.parent.name != "tmp"]


async def test_a_batch_writes_events_checkpoints_and_run_fields_at_once(store: Store):
    run = await store.create_run(document={"nodes": [], "edges": []})
    events = [*node_events(run.id, "a", 1), node_events(run.id, "b", 3)[0].to_json()]
    nodes = [
        *node_changes("a", {"input": 1}, {"output": 2}, input_hash="h" * 64, state_delta={"k": 1}),
        {"node_id": "b", "status": "started", "inputs": {"input": 2}},
    ]
    await store.write_batch(run.id, events=events, nodes=nodes, run={"steps": 1, "usage": {"t": 3}})
    stored = await store.events(run.id)
    assert [(e.seq, e.event_type, e.node_id) for e in stored] == [
        (1, "started", "a"),
        (2, "completed", "a"),
        (3, "started", "b"),
    ]
    assert stored[1].to_event().data == {"outputs": {"output": {"n": 1}}}
    a, b = await store.node_executions(run.id)
    assert (a.node_id, a.node_name, a.status, a.inputs, a.outputs) == (
        "a",
        "A",
        "completed",
        {"input": 1},
        {"output": 2},
    )
    assert (a.started_at, a.side_effects, a.attempts) == (T0, "pure", 1)
    assert (a.input_hash, a.state_delta) == ("h" * 64, {"k": 1})
    assert a.finished_at is not None and a.finished_at > T0
    assert (b.execution, b.status, b.finished_at, b.input_hash) == (1, "started", None, None)
    updated = await store.get_run(run.id)
    assert (updated.steps, updated.usage, updated.last_seq) == (1, {"t": 3}, 3)


async def test_the_changes_to_one_checkpoint_in_a_batch_merge_in_order(store: Store):
    run = await store.create_run()
    changes = [
        {"node_id": "a", "status": "started", "inputs": {"input": 1}, "attempts": 1},
        {"node_id": "a", "execution": 2, "status": "started"},
        {"node_id": "a", "status": "failed", "error": {"code": "boom"}, "attempts": 2},
        {"node_id": "a", "status": "completed", "outputs": {"output": 3}, "error": None},
    ]
    await store.write_batch(run.id, nodes=changes)
    first, second = await store.node_executions(run.id)
    assert (first.execution, first.status, first.attempts) == (1, "completed", 2)
    assert (first.inputs, first.outputs, first.error) == ({"input": 1}, {"output": 3}, None)
    assert (second.execution, second.status) == (2, "started")


async def test_a_later_batch_changes_only_the_keys_it_gives(store: Store):
    run = await store.create_run()
    await store.write_batch(run.id, nodes=[node_changes("a", {"input": 1}, None)[0]])
    await store.write_batch(run.id, nodes=[{"node_id": "a", "status": "completed", "outputs": {}}])
    (node,) = await store.node_executions(run.id)
    assert (node.status, node.inputs, node.outputs, node.node_name) == (
        "completed",
        {"input": 1},
        {},
        "A",
    )
    assert node.started_at == T0


async def test_sending_a_batch_again_changes_nothing(store: Store):
    run = await store.create_run()
    events = node_events(run.id, "a", 1) + node_events(run.id, "b", 3)
    nodes = node_changes("a", {"input": 1}, {"output": 1}, finished_at=T0 + timedelta(1))
    nodes += node_changes("b", {"input": 2}, {"output": 2}, finished_at=T0 + timedelta(2))
    await store.write_batch(run.id, events=events, nodes=nodes)
    before = (await store.events(run.id), await store.node_executions(run.id))
    await store.write_batch(run.id, events=events, nodes=nodes)
    after = (await store.events(run.id), await store.node_executions(run.id))
    assert after == before
    assert [e.seq for e in after[0]] == [1, 2, 3, 4]
    assert await store.last_seq(run.id) == 4


async def test_large_values_in_a_batch_become_one_blob_the_run_references(
    store: Store, count_rows: CountRows
):
    run = await store.create_run()
    outputs = {"output": BIG, "small": 1}
    await store.write_batch(
        run.id,
        events=node_events(run.id, "a", 1, outputs),
        nodes=node_changes("a", {"input": "small"}, outputs),
    )
    assert len(blob_files(store)) == 1
    assert (await count_rows("blobs"), await count_rows("blob_refs")) == (1, 1)
    (node,) = await store.node_executions(run.id)
    assert node.outputs == outputs
    (raw,) = await store.node_executions(run.id, resolve=False)
    assert raw.outputs["output"]["$ref"].startswith("blob:") and raw.outputs["small"] == 1
    completed = (await store.events(run.id))[1]
    assert completed.data == {"outputs": outputs}
    await store.finish_run(run.id, "completed")
    assert (await store.prune(timedelta(days=1))).blobs == 0  # still referenced


async def test_a_batch_moves_last_seq_up_only_and_refreshes_the_heartbeat(store: Store):
    run = await store.create_run()
    assert await store.last_seq(run.id) == 0
    await asyncio.sleep(0.01)
    await store.write_batch(run.id, events=node_events(run.id, "a", 3))
    after = await store.get_run(run.id)
    assert after.last_seq == 4 and after.heartbeat_at > run.heartbeat_at
    await store.write_batch(run.id, events=node_events(run.id, "a", 1))  # older seqs
    assert await store.last_seq(run.id) == 4
    await store.record_events(run.id, node_events(run.id, "b", 7))
    assert await store.last_seq(run.id) == 8
    await store.write_batch(run.id, run={"last_seq": 20})
    assert await store.last_seq(run.id) == 20
    await store.write_batch(run.id, events=node_events(run.id, "c", 30), run={"last_seq": 2})
    assert await store.last_seq(run.id) == 31  # the batch's highest seq wins over a lower one
    old = datetime.now(UTC) - timedelta(hours=1)
    await store.write_batch(run.id, run={"heartbeat_at": old, "status": "paused"})
    paused = await store.get_run(run.id)
    assert (paused.heartbeat_at, paused.status) == (old, "paused")


async def test_an_empty_batch_is_a_heartbeat(store: Store):
    run = await store.create_run()
    await asyncio.sleep(0.01)
    await store.write_batch(run.id)
    assert (await store.get_run(run.id)).heartbeat_at > run.heartbeat_at


async def test_a_batch_for_an_unknown_run_writes_nothing(store: Store):
    with pytest.raises(NotFoundError, match="ghost"):
        await store.write_batch(
            "ghost",
            events=node_events("ghost", "a", 1),
            nodes=node_changes("a", {"input": 1}, {"output": 1}),
        )
    with pytest.raises(NotFoundError, match="ghost"):
        await store.last_seq("ghost")
    await store.create_run(run_id="ghost")
    assert await store.events("ghost") == [] and await store.node_executions("ghost") == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "done"}, r"node 'a' \(execution 1\): status 'done' is not one of: started"),
        ({"status": "started", "side_effects": "maybe"}, "pure, idempotent, external"),
        ({"status": "started", "colour": "red"}, r"unknown key\(s\) colour; valid: node_id"),
        ({"node_name": "A"}, "needs .* a status"),
    ],
)
async def test_a_batch_with_an_invalid_change_is_refused_before_anything_is_written(
    store: Store, change: dict[str, Any], message: str
):
    run = await store.create_run()
    nodes = [*node_changes("b", {}, {}), {"node_id": "a", **change}]
    with pytest.raises(ValueError, match=message):
        await store.write_batch(run.id, events=node_events(run.id, "b", 1), nodes=nodes)
    assert await store.events(run.id) == [] and await store.node_executions(run.id) == []
    assert await store.get_run(run.id) == run


async def test_a_batch_refuses_unknown_run_fields_and_lists_the_valid_ones(store: Store):
    run = await store.create_run()
    with pytest.raises(ValueError, match=r"unknown field\(s\) colour; valid: .*last_seq"):
        await store.write_batch(run.id, events=node_events(run.id, "a", 1), run={"colour": 1})
    with pytest.raises(ValueError, match="not one of"):
        await store.write_batch(run.id, run={"status": "exploded"})
    with pytest.raises(ValueError, match="last_seq must be an integer"):
        await store.write_batch(run.id, run={"last_seq": None})
    assert await store.events(run.id) == []


async def test_record_node_keeps_an_input_hash_and_a_state_delta(store: Store):
    run = await store.create_run()
    await store.record_node(run.id, "a", status="started", input_hash="abc")
    await store.record_node(run.id, "a", status="completed", state_delta={"big": BIG})
    (node,) = await store.node_executions(run.id)
    assert (node.input_hash, node.state_delta) == ("abc", {"big": BIG})
    assert node.to_json()["input_hash"] == "abc"
    (raw,) = await store.node_executions(run.id, resolve=False)
    assert raw.state_delta["$ref"].startswith("blob:")


async def test_a_run_record_shows_where_it_stands(store: Store):
    parent = await store.create_run()
    rerun = await store.create_run(rerun_of=parent.id, rerun_from="b")
    assert (rerun.rerun_of, rerun.rerun_from, rerun.last_seq) == (parent.id, "b", 0)
    assert rerun.cancel_requested_at is None
    as_json = rerun.to_json()
    assert (as_json["rerun_of"], as_json["rerun_from"], as_json["last_seq"]) == (
        parent.id,
        "b",
        0,
    )
    assert as_json["cancel_requested_at"] is None
    await store.update_run(rerun.id, rerun_from="c")
    assert (await store.get_run(rerun.id)).rerun_from == "c"
