"""Group commit across runs: the records of many concurrent runs go to the database in a
few shared transactions; a bad write fails alone; `on_commit` sees each committed batch.
On SQLite and on Postgres."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

import pytest

from nodeloom import Event
from nodeloom.store import NotFoundError, Store
from nodeloom.store.committer import Write

RUNS = 40


def events_of(run_id: str, first: int = 1, count: int = 2) -> list[Event]:
    return [
        Event("started", {"n": seq}, "a", "A", "set", run_id, seq)
        for seq in range(first, first + count)
    ]


def batches_seen(store: Store) -> list[list[tuple[str | None, list[int]]]]:
    """Every committed batch, as (run id, event seqs) per write."""
    seen: list[list[tuple[str | None, list[int]]]] = []

    def listener(batch: Sequence[Write]) -> None:
        seen.append([(w.run_id, [row["seq"] for row in w.events]) for w in batch])

    store.on_commit(listener)
    return seen


async def test_the_writes_of_concurrent_runs_share_transactions(store: Store):
    runs = await asyncio.gather(*(store.create_run() for _ in range(RUNS)))
    seen = batches_seen(store)
    await asyncio.gather(*(store.write_batch(r.id, events=events_of(r.id)) for r in runs))
    assert sum(len(batch) for batch in seen) == RUNS
    assert len(seen) <= 3, f"{RUNS} concurrent writes took {len(seen)} transactions"
    for run in runs:
        assert [e.seq for e in await store.events(run.id)] == [1, 2]
        assert await store.last_seq(run.id) == 2


async def test_a_write_for_an_unknown_run_fails_alone_and_its_batch_is_committed(store: Store):
    runs = await asyncio.gather(*(store.create_run() for _ in range(10)))
    writes = [store.write_batch(r.id, events=events_of(r.id)) for r in runs]
    writes.insert(5, store.write_batch("nope", events=events_of("nope")))
    results = await asyncio.gather(*writes, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    assert len(failed) == 1 and isinstance(failed[0], NotFoundError)
    assert "nope" in str(failed[0])
    for run in runs:
        assert [e.seq for e in await store.events(run.id)] == [1, 2]


async def test_two_runs_created_at_once_with_one_id_let_exactly_one_through(store: Store):
    results = await asyncio.gather(
        *(store.create_run(run_id="twin") for _ in range(2)),
        *(store.create_run() for _ in range(5)),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], ValueError)
    assert "twin" in str(errors[0])
    assert len(await store.list_runs(limit=None)) == 6


async def test_two_writes_of_one_run_keep_their_order(store: Store):
    run = await store.create_run()
    seen = batches_seen(store)
    await asyncio.gather(
        store.write_batch(run.id, nodes=[{"node_id": "a", "status": "started"}]),
        store.write_batch(run.id, nodes=[{"node_id": "a", "status": "completed"}]),
    )
    (row,) = await store.node_executions(run.id)
    assert row.status == "completed"
    assert [len(batch) for batch in seen] == [1, 1]  # never both in one transaction


async def test_on_commit_sees_the_events_of_each_batch_once_they_are_committed(store: Store):
    run = await store.create_run()
    stored_when_seen: list[int] = []
    seen = batches_seen(store)

    def check(batch: Sequence[Write]) -> None:
        # A listener runs before the writers are released, after the commit.
        stored_when_seen.append(len(batch))

    store.on_commit(check)
    await store.write_batch(run.id, events=events_of(run.id, 1, 3))
    await store.finish_run(run.id, "completed", events=events_of(run.id, 4, 1))
    assert [write for batch in seen for write in batch] == [(run.id, [1, 2, 3]), (run.id, [4])]
    assert stored_when_seen == [1, 1]


async def test_a_failing_listener_does_not_fail_the_write(
    store: Store, capsys: pytest.CaptureFixture[str]
):
    run = await store.create_run()

    def broken(batch: Sequence[Write]) -> None:
        raise RuntimeError("listener bug")

    remove = store.on_commit(broken)
    await store.write_batch(run.id, events=events_of(run.id))
    remove()
    assert await store.last_seq(run.id) == 2
    assert "listener bug" in capsys.readouterr().err


async def test_finish_run_writes_the_last_records_with_the_end_in_one_write(store: Store):
    run = await store.create_run()
    await store.write_batch(run.id, events=events_of(run.id, 1, 2))
    seen = batches_seen(store)
    done = await store.finish_run(
        run.id,
        "completed",
        steps=1,
        events=events_of(run.id, 3, 2),
        nodes=[{"node_id": "a", "status": "completed", "outputs": {"output": 1}}],
    )
    assert len(seen) == 1
    assert (done.status, done.steps, done.last_seq) == ("completed", 1, 4)
    assert [e.seq for e in await store.events(run.id)] == [1, 2, 3, 4]
    (row,) = await store.node_executions(run.id)
    assert (row.status, row.outputs) == ("completed", {"output": 1})


async def test_end_run_ends_a_run_as_finish_run_does(store: Store):
    run = await store.create_run()
    await store.end_run(run.id, "failed", error={"code": "x", "message": "y"}, steps=2)
    record = await store.get_run(run.id)
    assert (record.status, record.error, record.steps) == (
        "failed",
        {"code": "x", "message": "y"},
        2,
    )
    assert record.duration_ms is not None and record.duration_ms >= 0
    with pytest.raises(NotFoundError):
        await store.end_run("nope", "completed")


async def test_a_run_of_a_document_another_process_pruned_is_still_recorded(store: Store):
    document = {"nodes": [{"id": "a", "type": "set"}], "edges": []}
    first = await store.create_run(document=document)
    await store.finish_run(first.id, "completed")
    other = await Store.open(store.url, blob_dir=store.blob_dir.parent)
    try:  # another process prunes: this store still thinks it has the document
        report = await other.prune(timedelta(0))
    finally:
        await other.close()
    assert report.documents == 1
    again = await store.create_run(document=document)
    assert await store.run_document(again.id) == document


async def test_times_in_any_zone_are_stored_as_the_same_instant(store: Store):
    from datetime import UTC, datetime, timezone

    paris = datetime(2026, 6, 1, 14, 30, 0, tzinfo=timezone(timedelta(hours=2)))
    naive = datetime(2026, 6, 1, 12, 30, 0, 250)  # naive means UTC
    first = await store.create_run(started_at=paris)
    second = await store.create_run(started_at=naive)
    assert (await store.get_run(first.id)).started_at == datetime(2026, 6, 1, 12, 30, tzinfo=UTC)
    assert (await store.get_run(second.id)).started_at == naive.replace(tzinfo=UTC)
    assert first.started_at == paris and second.started_at == naive.replace(tzinfo=UTC)
