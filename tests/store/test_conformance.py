"""What every store backend does: one behaviour per test, run on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import create_async_engine

from nodeloom.plugins.contract import Event
from nodeloom.store import (
    NotFoundError,
    Store,
    StoreCorruptError,
    StoreNewerSchemaError,
    migrator,
)
from nodeloom.store.schema import VERSION_TABLE, Base
from nodeloom.store.url import database_url

CountRows = Callable[[str], Awaitable[int]]  # the count_rows fixture (conftest)
GRAPH = {"nodes": [{"id": "a", "type": "set"}], "edges": []}
BIG = "x" * 300_000  # over the default 256 KB threshold


def event(run_id: str, seq: int, kind: str = "progress", data: dict | None = None) -> Event:
    return Event(kind, data, f"n{seq}", f"Node {seq}", "set", run_id, seq, 1_700_000_000.0 + seq)


def blob_files(store: Store) -> list[Path]:
    return [
        path
        for folder in store.blob_dir.iterdir()
        if folder.is_dir() and folder.name != "tmp"
        for path in folder.iterdir()
    ]


def age_blobs(store: Store, hours: float = 1) -> None:
    old = time.time() - hours * 3600
    for path in blob_files(store):
        os.utime(path, (old, old))


async def execute(url: str, *statements: str) -> None:
    engine = create_async_engine(database_url(url))
    try:
        async with engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


# -- flows ------------------------------------------------------------------------------


async def test_a_saved_flow_reads_back_with_its_document(store: Store):
    saved = await store.save_flow("Hello", GRAPH)
    loaded = await store.get_flow(saved.flow_id)
    assert (loaded.name, loaded.version, loaded.document) == ("Hello", 1, GRAPH)
    assert loaded.document_hash == saved.document_hash


async def test_each_save_adds_a_version_and_keeps_the_older_ones(store: Store):
    first = await store.save_flow("v", {"nodes": [1]})
    second = await store.save_flow("v2", {"nodes": [2]}, first.flow_id)
    assert second.version == 2
    assert (await store.get_flow(first.flow_id, 1)).document == {"nodes": [1]}
    assert (await store.get_flow(first.flow_id)).document == {"nodes": [2]}
    versions = await store.list_versions(first.flow_id)
    assert [v.version for v in versions] == [1, 2]
    assert all(v.size > 0 for v in versions)


async def test_list_flows_shows_each_flow_once_with_its_latest_version(store: Store):
    a = await store.save_flow("A", GRAPH)
    await store.save_flow("A renamed", GRAPH, a.flow_id)
    b = await store.save_flow("B", GRAPH)
    flows = await store.list_flows()
    assert [(f.id, f.name, f.latest_version) for f in flows] == [
        (b.flow_id, "B", 1),
        (a.flow_id, "A renamed", 2),
    ]


async def test_a_deleted_flow_leaves_the_lists_but_runs_keep_its_document(store: Store):
    saved = await store.save_flow("Gone", GRAPH)
    run = await store.create_run(flow_id=saved.flow_id)
    await store.delete_flow(saved.flow_id)
    assert await store.list_flows() == []
    with pytest.raises(NotFoundError, match="deleted"):
        await store.get_flow(saved.flow_id)
    with pytest.raises(NotFoundError):
        await store.save_flow("again", GRAPH, saved.flow_id)
    assert (await store.list_flows(include_deleted=True))[0].deleted
    assert (await store.get_flow(saved.flow_id, include_deleted=True)).document == GRAPH
    assert await store.run_document(run.id) == GRAPH


async def test_an_unknown_flow_or_version_raises_not_found(store: Store):
    with pytest.raises(NotFoundError) as caught:
        await store.get_flow("nope")
    assert caught.value.code == "not_found"
    saved = await store.save_flow("F", GRAPH)
    with pytest.raises(NotFoundError, match="versions 1 to 1"):
        await store.get_flow(saved.flow_id, 7)
    with pytest.raises(NotFoundError):
        await store.delete_flow("nope")


# -- runs -------------------------------------------------------------------------------


async def test_a_run_of_a_saved_flow_references_that_versions_document(store: Store):
    first = await store.save_flow("F", {"nodes": [1]})
    await store.save_flow("F", {"nodes": [2]}, first.flow_id)
    latest = await store.create_run(flow_id=first.flow_id)
    pinned = await store.create_run(flow_id=first.flow_id, flow_version=1)
    assert latest.flow_version == 2
    assert await store.run_document(latest.id) == {"nodes": [2]}
    assert await store.run_document(pinned.id) == {"nodes": [1]}


async def test_runs_of_one_document_share_one_stored_copy(store: Store, count_rows: CountRows):
    runs = [await store.create_run(document=GRAPH) for _ in range(5)]
    assert len({run.document_hash for run in runs}) == 1
    assert await count_rows("documents") == 1
    assert await store.run_document(runs[-1].id) == GRAPH


async def test_a_new_run_is_running_and_owned_by_this_process(store: Store):
    run = await store.create_run(
        document=GRAPH, trigger={"message": "hi"}, chat_id="c1", settings={"max_steps": 5}
    )
    assert run.status == "running"
    assert (run.trigger, run.chat_id, run.settings) == ({"message": "hi"}, "c1", {"max_steps": 5})
    assert run.owner_pid == os.getpid()
    assert run.heartbeat_at is not None and run.started_at is not None
    assert run.created_at.tzinfo is not None
    assert await store.get_run(run.id) == run


async def test_a_duplicate_run_id_is_refused(store: Store):
    await store.create_run(run_id="r1")
    with pytest.raises(ValueError, match="already exists"):
        await store.create_run(run_id="r1")


async def test_update_run_changes_only_the_given_fields(store: Store):
    run = await store.create_run(trigger={"a": 1})
    await store.update_run(run.id, status="paused", steps=3, usage={"total_tokens": 9})
    updated = await store.get_run(run.id)
    assert (updated.status, updated.steps, updated.usage) == ("paused", 3, {"total_tokens": 9})
    assert updated.trigger == {"a": 1}


async def test_update_run_refuses_an_unknown_field_and_lists_the_valid_ones(store: Store):
    run = await store.create_run()
    with pytest.raises(ValueError, match=r"valid: .*status"):
        await store.update_run(run.id, colour="red")
    with pytest.raises(ValueError, match="not one of"):
        await store.update_run(run.id, status="exploded")
    with pytest.raises(NotFoundError):
        await store.update_run("nope", steps=1)


async def test_finish_run_records_status_error_usage_and_duration(store: Store):
    started = datetime.now(UTC) - timedelta(seconds=2)
    run = await store.create_run(started_at=started)
    error = {"code": "node_failed", "message": "boom", "node_id": "a"}
    done = await store.finish_run(run.id, "failed", error=error, usage={"total_tokens": 1}, steps=4)
    assert (done.status, done.error, done.usage, done.steps) == (
        "failed",
        error,
        {"total_tokens": 1},
        4,
    )
    assert done.finished and done.finished_at is not None
    assert 1900 < done.duration_ms < 60_000


async def test_list_runs_filters_and_pages_newest_first(store: Store):
    flow = await store.save_flow("F", GRAPH)
    ids = []
    for number in range(6):
        run = await store.create_run(
            flow_id=flow.flow_id if number % 2 else None, chat_id="chat" if number < 3 else None
        )
        ids.append(run.id)
        if number == 5:
            await store.finish_run(run.id, "completed")
    runs = await store.list_runs()
    assert [r.id for r in runs] == ids[::-1]
    assert [r.id for r in await store.list_runs(flow_id=flow.flow_id)] == [ids[5], ids[3], ids[1]]
    assert [r.id for r in await store.list_runs(chat_id="chat")] == [ids[2], ids[1], ids[0]]
    assert [r.id for r in await store.list_runs(status="completed")] == [ids[5]]
    assert len(await store.list_runs(status=["running", "completed"])) == 6
    assert [r.id for r in await store.list_runs(limit=2, offset=1)] == [ids[4], ids[3]]
    since = (await store.get_run(ids[4])).created_at
    assert [r.id for r in await store.list_runs(since=since)] == [ids[5], ids[4]]


async def test_an_unknown_run_raises_not_found_everywhere(store: Store):
    for call in (
        store.get_run("nope"),
        store.events("nope"),
        store.node_executions("nope"),
        store.record_events("nope", [event("nope", 1)]),
        store.record_node("nope", "a", status="started"),
        store.heartbeat("nope"),
        store.finish_run("nope", "completed"),
        store.run_document("nope"),
    ):
        with pytest.raises(NotFoundError, match="nope"):
            await call


async def test_heartbeat_refreshes_the_owners_timestamp(store: Store):
    run = await store.create_run()
    other = await store.create_run()
    await asyncio.sleep(0.01)
    await store.heartbeat(run.id, other.id)
    assert (await store.get_run(run.id)).heartbeat_at > run.heartbeat_at


# -- events -----------------------------------------------------------------------------


async def test_events_come_back_in_seq_order_from_a_given_seq(store: Store):
    run = await store.create_run()
    await store.record_events(run.id, [event(run.id, seq) for seq in (3, 1, 2)])
    await store.record_events(run.id, [event(run.id, 4), event(run.id, 5)])
    assert [e.seq for e in await store.events(run.id)] == [1, 2, 3, 4, 5]
    assert [e.seq for e in await store.events(run.id, from_seq=3)] == [3, 4, 5]
    assert [e.seq for e in await store.events(run.id, from_seq=2, limit=2)] == [2, 3]


async def test_events_round_trip_as_the_engines_event_json(store: Store):
    run = await store.create_run()
    original = Event("completed", {"outputs": {"output": [1, "é"]}}, "n1", "N", "set", run.id, 1)
    as_json = Event("started", None, "n2", "M", "set", run.id, 2).to_json()
    assert await store.record_events(run.id, [original, as_json]) == 2
    stored = await store.events(run.id)
    assert stored[0].to_json() == original.to_json()
    assert stored[1].to_json() == as_json
    assert stored[0].to_event().data == original.data


async def test_recording_an_event_again_keeps_the_first_copy(store: Store):
    run = await store.create_run()
    await store.record_events(run.id, [event(run.id, 1, data={"v": 1})])
    await store.record_events(run.id, [event(run.id, 1, data={"v": 2}), event(run.id, 2)])
    stored = await store.events(run.id)
    assert [(e.seq, e.data) for e in stored] == [(1, {"v": 1}), (2, {})]


# -- checkpoints ------------------------------------------------------------------------


async def test_a_checkpoint_is_one_row_per_run_node_and_execution(store: Store):
    run = await store.create_run()
    await store.record_node(
        run.id,
        "a",
        status="started",
        node_name="A",
        node_type="set",
        inputs={"input": 1},
        side_effects="external",
    )
    await store.record_node(run.id, "a", status="completed", outputs={"output": 2}, attempts=2)
    (node,) = await store.node_executions(run.id)
    assert (node.node_name, node.status, node.inputs, node.outputs) == (
        "A",
        "completed",
        {"input": 1},
        {"output": 2},
    )
    assert (node.attempts, node.side_effects) == (2, "external")
    assert node.finished_at is not None and node.finished_at >= node.started_at


async def test_a_node_that_runs_several_times_has_a_row_per_execution(store: Store):
    run = await store.create_run()
    for execution in (1, 2, 3):
        await store.record_node(
            run.id, "loop/inner", execution, status="completed", outputs={"output": execution}
        )
    rows = await store.node_executions(run.id)
    assert [(r.node_id, r.execution, r.outputs) for r in rows] == [
        ("loop/inner", n, {"output": n}) for n in (1, 2, 3)
    ]


async def test_node_executions_come_back_in_the_order_they_started(store: Store):
    run = await store.create_run()
    base = datetime.now(UTC)
    for offset, node in ((2, "c"), (0, "b"), (1, "a")):
        await store.record_node(
            run.id, node, status="waiting", started_at=base + timedelta(seconds=offset)
        )
    assert [r.node_id for r in await store.node_executions(run.id)] == ["b", "a", "c"]
    assert (await store.node_executions(run.id))[0].finished_at is None


async def test_a_failed_checkpoint_keeps_its_error_and_usage(store: Store):
    run = await store.create_run()
    error = {"code": "node_timeout", "message": "too slow"}
    await store.record_node(run.id, "a", status="failed", error=error, usage={"total_tokens": 7})
    (node,) = await store.node_executions(run.id)
    assert (node.status, node.error, node.usage) == ("failed", error, {"total_tokens": 7})


async def test_an_unknown_status_or_side_effect_is_refused(store: Store):
    run = await store.create_run()
    with pytest.raises(ValueError, match="started, completed"):
        await store.record_node(run.id, "a", status="done")
    with pytest.raises(ValueError, match="pure, idempotent, external"):
        await store.record_node(run.id, "a", status="started", side_effects="maybe")
    with pytest.raises(ValueError, match="status"):
        await store.create_run(status="sleeping")


# -- blobs ------------------------------------------------------------------------------


async def test_a_large_value_is_one_blob_however_many_rows_reference_it(
    store: Store, count_rows: CountRows
):
    run = await store.create_run()
    await store.record_node(run.id, "a", status="completed", outputs={"output": BIG, "meta": 1})
    await store.record_node(run.id, "b", status="completed", inputs={"input": BIG})
    await store.record_events(
        run.id, [event(run.id, 1, "completed", {"outputs": {"output": BIG}, "duration_ms": 1})]
    )
    assert len(blob_files(store)) == 1
    assert await count_rows("blobs") == 1
    a, b = await store.node_executions(run.id)
    assert a.outputs == {"output": BIG, "meta": 1} and b.inputs == {"input": BIG}
    (stored,) = await store.events(run.id)
    assert stored.data == {"outputs": {"output": BIG}, "duration_ms": 1}


async def test_unresolved_reads_return_the_blob_reference_and_it_streams(store: Store):
    run = await store.create_run(trigger={"file": BIG})
    await store.record_node(run.id, "a", status="completed", outputs={"output": BIG})
    (node,) = await store.node_executions(run.id, resolve=False)
    ref = node.outputs["output"]
    assert ref["$ref"].startswith("blob:") and ref["mime"] == "application/json"
    assert ref["size"] == len(BIG) + 2
    chunks = [chunk async for chunk in store.open_blob(ref)]
    assert b"".join(chunks) == f'"{BIG}"'.encode()
    assert await store.load_blob(ref["$ref"]) == BIG
    assert (await store.get_run(run.id)).trigger == {"file": BIG}
    assert "$ref" in str((await store.get_run(run.id, resolve=False)).trigger)


async def test_small_values_stay_in_their_row(store: Store):
    run = await store.create_run()
    await store.record_node(run.id, "a", status="completed", outputs={"output": "small"})
    assert not store.blob_dir.exists() or blob_files(store) == []
    (node,) = await store.node_executions(run.id, resolve=False)
    assert node.outputs == {"output": "small"}


# -- interrupted runs -------------------------------------------------------------------


async def test_a_running_run_whose_process_is_gone_is_marked_interrupted(store: Store):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    run = await store.create_run(owner_pid=child.pid)
    (found,) = await store.find_interrupted()
    assert (found.id, found.status) == (run.id, "interrupted")
    assert found.error["code"] == "interrupted" and str(child.pid) in found.error["message"]
    assert found.finished_at is not None
    assert await store.find_interrupted() == []


async def test_a_running_run_with_a_stale_heartbeat_is_marked_interrupted(store: Store):
    run = await store.create_run(owner_host="elsewhere", owner_pid=1)
    await store.update_run(run.id, heartbeat_at=datetime.now(UTC) - timedelta(minutes=10))
    fresh = await store.create_run(owner_host="elsewhere", owner_pid=1)
    found = await store.find_interrupted(stale_after=timedelta(minutes=2))
    assert [r.id for r in found] == [run.id]
    assert (await store.get_run(fresh.id)).status == "running"


async def test_live_paused_and_finished_runs_are_never_marked_interrupted(store: Store):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    live = await store.create_run()
    paused = await store.create_run(status="paused", owner_pid=child.pid)
    done = await store.create_run(owner_pid=child.pid)
    await store.finish_run(done.id, "completed")
    assert await store.find_interrupted(stale_after=timedelta(hours=1)) == []
    assert (await store.get_run(live.id)).status == "running"
    assert (await store.get_run(paused.id)).status == "paused"


# -- prune ------------------------------------------------------------------------------


async def test_prune_deletes_old_finished_runs_with_their_events_and_checkpoints(store: Store):
    old = await store.create_run(document=GRAPH)
    await store.record_events(old.id, [event(old.id, 1), event(old.id, 2)])
    await store.record_node(old.id, "a", status="completed", outputs={"output": 1})
    await store.finish_run(old.id, "completed", finished_at=datetime.now(UTC) - timedelta(days=40))
    report = await store.prune(timedelta(days=30))
    assert (report.runs, report.events, report.node_executions) == (1, 2, 1)
    assert report.documents == 1
    with pytest.raises(NotFoundError):
        await store.get_run(old.id)


async def test_prune_keeps_unfinished_and_recent_runs(store: Store):
    long_ago = datetime.now(UTC) - timedelta(days=40)
    running = await store.create_run(started_at=long_ago)
    paused = await store.create_run(status="paused")
    recent = await store.create_run()
    await store.finish_run(recent.id, "failed")
    report = await store.prune(timedelta(days=30))
    assert report.runs == 0
    for run in (running, paused, recent):
        assert (await store.get_run(run.id)).id == run.id


async def test_prune_deletes_blobs_nothing_references_and_counts_the_bytes(store: Store):
    shared, alone = "s" * 300_000, "a" * 400_000
    old = await store.create_run()
    await store.record_node(old.id, "a", status="completed", outputs={"x": shared, "y": alone})
    await store.finish_run(old.id, "completed", finished_at=datetime.now(UTC) - timedelta(days=2))
    kept = await store.create_run()
    await store.record_node(kept.id, "a", status="completed", outputs={"x": shared})
    age_blobs(store)
    report = await store.prune(timedelta(days=1))
    assert (report.runs, report.blobs, report.bytes_freed) == (1, 1, len(alone) + 2)
    assert len(blob_files(store)) == 1
    (node,) = await store.node_executions(kept.id)
    assert node.outputs == {"x": shared}


async def test_prune_keeps_a_blob_written_moments_ago(store: Store):
    old = await store.create_run()
    await store.record_node(old.id, "a", status="completed", outputs={"x": BIG})
    await store.finish_run(old.id, "completed", finished_at=datetime.now(UTC) - timedelta(days=2))
    report = await store.prune(timedelta(days=1))
    assert (report.runs, report.blobs) == (1, 0)
    age_blobs(store)
    assert (await store.prune(timedelta(days=1))).blobs == 1
    assert blob_files(store) == []


async def test_prune_keeps_documents_a_flow_version_still_uses(store: Store):
    flow = await store.save_flow("F", GRAPH)
    run = await store.create_run(flow_id=flow.flow_id)
    await store.finish_run(run.id, "completed", finished_at=datetime.now(UTC) - timedelta(days=9))
    report = await store.prune(timedelta(days=1))
    assert (report.runs, report.documents) == (1, 0)
    assert (await store.get_flow(flow.flow_id)).document == GRAPH


# -- schema -----------------------------------------------------------------------------


async def test_opening_twice_migrates_once_and_keeps_the_data(store_url: str, tmp_path: Path):
    first = await Store.open(store_url, blob_dir=tmp_path)
    run = await first.create_run(document=GRAPH)
    await first.close()
    second = await Store.open(store_url, blob_dir=tmp_path)
    try:
        assert second.store_id == first.store_id
        assert (await second.get_run(run.id)).id == run.id
    finally:
        await second.close()


async def test_the_migrations_build_exactly_the_models_schema(store: Store, store_url: str):
    engine = create_async_engine(database_url(store_url))
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(
                        sync, opts={"compare_type": True, "version_table": VERSION_TABLE}
                    ),
                    Base.metadata,
                )
            )
    finally:
        await engine.dispose()
    assert diff == []


async def test_a_database_of_a_newer_schema_is_refused_untouched(store_url: str, tmp_path: Path):
    opened = await Store.open(store_url, blob_dir=tmp_path)
    run = await opened.create_run()
    await opened.close()
    await execute(store_url, f"UPDATE {VERSION_TABLE} SET version_num = '9999_future'")
    with pytest.raises(StoreNewerSchemaError, match=r"9999_future.*[Uu]pgrade nodeloom") as caught:
        await Store.open(store_url, blob_dir=tmp_path)
    assert caught.value.code == "store_newer_schema"
    await execute(store_url, f"UPDATE {VERSION_TABLE} SET version_num = '{migrator.head()}'")
    reopened = await Store.open(store_url, blob_dir=tmp_path)
    try:
        assert (await reopened.get_run(run.id)).id == run.id
    finally:
        await reopened.close()


async def test_a_database_of_another_application_is_refused_untouched(store_url: str):
    await execute(store_url, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(StoreCorruptError, match=r"not a nodeloom database.*customers"):
        await Store.open(store_url)
    engine = create_async_engine(database_url(store_url))
    try:
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
    finally:
        await engine.dispose()
    assert tables == ["customers"]


# -- concurrency ------------------------------------------------------------------------


async def test_fifty_concurrent_runs_record_events_and_checkpoints(store: Store):
    async def one_run(number: int) -> str:
        run = await store.create_run(document=GRAPH, trigger={"n": number})
        seq = 0
        for node in range(10):
            await store.record_node(run.id, f"n{node}", status="started", inputs={"input": node})
            await store.record_events(
                run.id, [event(run.id, seq + 1, "started"), event(run.id, seq + 2, "completed")]
            )
            seq += 2
            await store.record_node(run.id, f"n{node}", status="completed", outputs={"o": node})
        await store.finish_run(run.id, "completed", steps=10)
        return run.id

    ids = await asyncio.gather(*(one_run(n) for n in range(50)))
    for run_id in ids:
        assert len(await store.events(run_id)) == 20
        assert len(await store.node_executions(run_id)) == 10
    assert len(await store.list_runs(status="completed", limit=None)) == 50
