"""Postgres: a group-commit batch written in ONE statement (nodeloom.store.pgbatch), and
what still goes the transaction's way. Against a real throwaway Postgres."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from nodeloom import Event
from nodeloom.store import NotFoundError, Store
from nodeloom.store.committer import Committer, Phase, Write
from nodeloom.store.rows import event_row
from nodeloom.store.schema import Run

DOCUMENT = {"nodes": [{"id": "a", "type": "set"}], "edges": []}


@pytest.fixture
async def pg(postgres_server: str, tmp_path: Path) -> AsyncIterator[tuple[Store, str]]:
    from nodeloom.testing.stores import create_database

    url = await create_database(postgres_server)
    store = await Store.open(url, blob_dir=tmp_path / "blobs")
    try:
        yield store, url
    finally:
        await store.close()


def committer(store: Store) -> Committer:
    return store._committer


def statements(store: Store) -> int:
    one = committer(store).one_statement
    assert one is not None
    return one.statements


def events_of(run_id: str, count: int = 2) -> list[Event]:
    return [
        Event("started", {"n": seq}, "a", "A", "set", run_id, seq) for seq in range(1, count + 1)
    ]


async def test_the_records_of_concurrent_runs_go_in_one_statement_per_batch(pg):
    store, _ = pg
    runs = await asyncio.gather(*(store.create_run(document=DOCUMENT) for _ in range(30)))
    before, batches = statements(store), committer(store).batches
    await asyncio.gather(
        *(
            store.write_batch(
                r.id,
                events=events_of(r.id),
                nodes=[{"node_id": "a", "status": "completed", "outputs": {"x": 1}}],
                run={"steps": 1},
            )
            for r in runs
        )
    )
    await asyncio.gather(*(store.end_run(r.id, "completed", steps=1) for r in runs))
    made = committer(store).batches - batches
    assert made >= 2 and statements(store) - before == made  # every batch: one statement
    for run in runs:
        record = await store.get_run(run.id)
        assert record.status == "completed" and record.last_seq == 2
        assert record.duration_ms is not None and record.duration_ms >= 0
        assert [e.seq for e in await store.events(run.id)] == [1, 2]
        (node,) = await store.node_executions(run.id)
        assert node.status == "completed" and node.outputs == {"x": 1}


async def test_a_run_and_its_events_inserted_in_one_statement_pass_the_foreign_key(pg):
    # Foreign keys are checked at the end of the statement: the events of a run inserted
    # by the same statement find it.
    store, _ = pg
    at = datetime.now(UTC)
    run_row = {"id": "r1", "status": "running", "created_at": at, "steps": 0}
    rows = [event_row("r1", e) for e in events_of("r1")]
    write = Write(
        "r1",
        [
            (Phase.RUN_INSERT, store._plain_insert(Run), [run_row]),
            (Phase.EVENT, store._append_events(), rows),
        ],
    )
    before = statements(store)
    await committer(store).submit(write)
    assert statements(store) == before + 1
    assert [e.seq for e in await store.events("r1")] == [1, 2]
    assert (await store.get_run("r1")).last_seq == 0  # the column's default


async def test_a_missing_run_fails_alone_and_the_rest_of_its_batch_is_written(pg):
    store, _ = pg
    runs = await asyncio.gather(*(store.create_run() for _ in range(8)))
    updates = [store.update_run(r.id, steps=7) for r in runs]
    updates.insert(3, store.update_run("nope", steps=7))
    results = await asyncio.gather(*updates, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    assert len(failed) == 1 and isinstance(failed[0], NotFoundError)
    assert "nope" in str(failed[0])
    assert {(await store.get_run(r.id)).steps for r in runs} == {7}


async def test_each_run_written_is_notified_once_its_statement_commits(pg):
    store, url = pg
    listener = await asyncpg.connect(url)
    heard: list[str] = []
    await listener.add_listener("nodeloom_runs", lambda *args: heard.append(args[3]))
    try:
        runs = await asyncio.gather(*(store.create_run() for _ in range(5)))
        before = statements(store)
        await asyncio.gather(*(store.write_batch(r.id, events=events_of(r.id)) for r in runs))
        assert statements(store) > before
        for _ in range(100):
            if {r.id for r in runs} <= set(heard):
                break
            await asyncio.sleep(0.02)
        assert {r.id for r in runs} <= set(heard)
        heard.clear()
        with pytest.raises(NotFoundError):
            await store.update_run("nope", steps=1)
        await asyncio.sleep(0.2)
        assert "nope" not in heard  # a statement that failed notified nobody
    finally:
        await listener.close()


async def test_two_runs_of_one_new_document_created_at_once_store_it_once(pg):
    store, _ = pg
    document = {**DOCUMENT, "name": "shared"}
    before = statements(store)
    first, second = await asyncio.gather(
        store.create_run(document=document), store.create_run(document=document)
    )
    assert statements(store) == before + 1
    assert first.document_hash == second.document_hash


async def test_a_write_that_reads_its_run_back_goes_through_a_transaction(pg):
    store, _ = pg
    a, b = await asyncio.gather(store.create_run(), store.create_run())
    before, batches = statements(store), committer(store).batches
    finished, _ = await asyncio.gather(
        store.finish_run(a.id, "completed", events=events_of(a.id)),
        store.end_run(b.id, "failed", error={"message": "boom"}),
    )
    assert finished.status == "completed" and finished.id == a.id
    assert statements(store) == before + 1  # the end of b
    assert committer(store).batches == batches + 2  # and a transaction for a
    assert (await store.get_run(b.id)).error == {"message": "boom"}


async def test_a_value_json_cannot_carry_is_written_the_usual_way(pg):
    store, _ = pg
    run = await store.create_run()
    before = statements(store)
    await store.end_run(run.id, "completed", duration_ms=math.nan)
    assert statements(store) == before  # the statement failed: nothing of it was written
    record = await store.get_run(run.id)
    assert record.status == "completed" and math.isnan(record.duration_ms)


async def test_a_value_too_long_for_its_column_fails_instead_of_being_cut(pg):
    store, _ = pg
    run = await store.create_run()
    update = store._run_update(frozenset({"status"}), False)
    write = Write(
        run.id, [(Phase.RUN_UPDATE, update, [{"new_status": "x" * 40, "run_key": run.id}])]
    )
    with pytest.raises(Exception, match="too long"):
        await committer(store).submit(write)
    assert (await store.get_run(run.id)).status == "running"


async def test_its_connection_killed_is_replaced_and_no_write_is_lost(pg, postgres_server: str):
    store, url = pg
    runs = await asyncio.gather(*(store.create_run() for _ in range(3)))
    admin = await asyncpg.connect(f"{postgres_server}/postgres")
    try:
        killed = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
            url.rsplit("/", 1)[1],
        )
    finally:
        await admin.close()
    assert killed >= 1
    # At once: the driver may not have seen the hang-up yet (then the statement fails
    # and the batch goes through a transaction on a fresh pooled connection).
    await asyncio.gather(*(store.write_batch(r.id, events=events_of(r.id)) for r in runs))
    before = statements(store)
    await asyncio.gather(*(store.end_run(r.id, "completed") for r in runs))
    assert statements(store) == before + 1  # a new connection of its own
    for run in runs:
        assert [e.seq for e in await store.events(run.id)] == [1, 2]
        assert (await store.get_run(run.id)).status == "completed"


async def test_text_with_quotes_escapes_and_any_script_is_stored_as_it_was(pg):
    store, _ = pg
    tricky = 'a "quoted" \\ back\\slash, a\nnew line, a tab\t, é, 日本, 🙂, \\u0041, {x}, $1'
    run = await store.create_run(trigger={"text": tricky}, chat_id=tricky)
    before = statements(store)
    await store.write_batch(
        run.id,
        events=[Event("started", {"text": tricky}, "a", tricky, "set", run.id, 1)],
        nodes=[{"node_id": "a", "status": "completed", "outputs": {tricky: tricky}}],
    )
    assert statements(store) == before + 1
    record = await store.get_run(run.id)
    assert record.trigger == {"text": tricky} and record.chat_id == tricky
    (event,) = await store.events(run.id)
    assert event.data == {"text": tricky} and event.node_name == tricky
    (node,) = await store.node_executions(run.id)
    assert node.outputs == {tricky: tricky}


async def test_a_batch_finds_the_runs_it_updates_by_key_not_by_scanning_the_runs_table(pg):
    store, _ = pg
    runs = await asyncio.gather(*(store.create_run() for _ in range(2_000)))
    await store.write_batch(runs[0].id, events=events_of(runs[0].id))  # opens its connection
    connection = committer(store).one_statement._connection
    await connection.execute("ANALYZE runs")
    # The shape of its updates: runs joined to a JSON parameter of unknown length.
    plan = "\n".join(
        row[0]
        for row in await connection.fetch(
            "EXPLAIN UPDATE runs SET heartbeat_at = _v.at FROM json_to_recordset($1::json) "
            "AS _v(run_key text, at timestamptz) WHERE runs.id = _v.run_key",
            f'[{{"run_key": "{runs[1].id}", "at": "2026-01-01T00:00:00+00:00"}}]',
        )
    )
    assert "Index Scan" in plan and "Seq Scan on runs" not in plan, plan
    await store.end_run(runs[1].id, "completed")
    assert (await store.get_run(runs[1].id)).status == "completed"
