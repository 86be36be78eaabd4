"""A run prepared and written with its first records (`prepare_run`, `write_created`,
`end_run(created=...)`): one transaction instead of two, and every failure of the
creation still its own. On SQLite and on Postgres."""

from __future__ import annotations

from datetime import timedelta

import pytest

from nodeloom import Event
from nodeloom.store import NotFoundError, Store

DOCUMENT = {"nodes": [{"id": "a", "type": "set"}], "edges": []}


def events_of(run_id: str, count: int = 2) -> list[Event]:
    return [
        Event("started", {"n": seq}, "a", "A", "set", run_id, seq) for seq in range(1, count + 1)
    ]


def commits(store: Store) -> int:
    return store._committer.batches


async def test_a_prepared_run_exists_only_once_its_first_write_carries_it(store: Store):
    new = await store.prepare_run(document=DOCUMENT, trigger={"message": "hi"})
    with pytest.raises(NotFoundError):
        await store.get_run(new.run_id)
    before = commits(store)
    await store.write_created(
        new,
        events=events_of(new.run_id),
        nodes=[{"node_id": "a", "status": "started", "inputs": {"input": "hi"}}],
    )
    assert commits(store) - before == 1
    stored = await store.get_run(new.run_id)
    assert stored.status == "running" and stored.last_seq == 2
    assert stored.trigger == new.record.trigger == {"message": "hi"}
    assert stored.created_at == new.record.created_at
    assert [e.seq for e in await store.events(new.run_id)] == [1, 2]
    (checkpoint,) = await store.node_executions(new.run_id)
    assert checkpoint.inputs == {"input": "hi"}
    assert await store.run_document(new.run_id) == DOCUMENT


async def test_a_short_run_is_created_recorded_and_ended_in_one_transaction(store: Store):
    new = await store.prepare_run(document=DOCUMENT)
    before = commits(store)
    await store.end_run(
        new.run_id,
        "completed",
        steps=1,
        events=events_of(new.run_id, 3),
        nodes=[{"node_id": "a", "status": "completed", "outputs": {"output": 1}}],
        created=new,
    )
    assert commits(store) - before == 1
    stored = await store.get_run(new.run_id)
    assert (stored.status, stored.steps, stored.last_seq) == ("completed", 1, 3)
    assert stored.finished_at is not None and stored.duration_ms is not None
    assert len(await store.events(new.run_id)) == 3


async def test_a_run_created_with_its_end_is_inserted_ended_in_one_change_of_its_row(
    store: Store,
):
    new = await store.prepare_run(document=DOCUMENT)
    one = store._committer.one_statement  # Postgres: a batch in one statement
    before = one.statements if one is not None else 0
    finished = new.record.created_at + timedelta(milliseconds=250)
    await store.end_run(
        new.run_id,
        "failed",
        error={"code": "boom", "message": "it broke"},
        usage={"tokens": 7},
        finished_at=finished,
        events=events_of(new.run_id),
        created=new,
    )
    if one is not None:  # one change of the runs row: it fits the one statement
        assert one.statements - before == 1
    stored = await store.get_run(new.run_id)
    assert stored.status == "failed" and stored.finished_at == finished
    assert stored.error == {"code": "boom", "message": "it broke"}
    assert stored.usage == {"tokens": 7}
    assert stored.duration_ms == pytest.approx(250.0, abs=0.01)  # from its start, as _finish
    given = await store.prepare_run(document=DOCUMENT)
    await store.end_run(given.run_id, "completed", duration_ms=12.5, created=given)
    assert (await store.get_run(given.run_id)).duration_ms == 12.5


async def test_a_prepared_run_whose_id_is_taken_writes_nothing(store: Store):
    other = await store.create_run(run_id="taken", document=DOCUMENT)
    new = await store.prepare_run(run_id="taken", document=DOCUMENT, trigger="mine")
    with pytest.raises(ValueError, match="a run with id 'taken' already exists"):
        await store.write_created(new, events=events_of("taken"))
    with pytest.raises(ValueError, match="already exists"):
        await store.end_run("taken", "completed", events=events_of("taken"), created=new)
    stored = await store.get_run("taken")
    assert stored.status == "running" and stored.trigger is None and stored.last_seq == 0
    assert stored.created_at == other.created_at
    assert await store.events("taken") == []


async def test_a_prepared_run_of_an_unknown_flow_fails_before_anything_is_written(
    store: Store,
):
    with pytest.raises(NotFoundError, match="no flow with id 'nope'"):
        await store.prepare_run(flow_id="nope")
    flow = await store.save_flow("F", DOCUMENT)
    with pytest.raises(NotFoundError, match="has no version 7"):
        await store.prepare_run(flow_id=flow.flow_id, flow_version=7)


async def test_an_invalid_first_record_leaves_the_prepared_run_unwritten(store: Store):
    new = await store.prepare_run(document=DOCUMENT)
    with pytest.raises(ValueError, match="unknown key"):
        await store.write_created(new, nodes=[{"node_id": "a", "status": "started", "x": 1}])
    with pytest.raises(NotFoundError):
        await store.get_run(new.run_id)
    await store.write_created(new)  # nothing else: the run alone
    assert (await store.get_run(new.run_id)).last_seq == 0


async def test_a_prepared_run_of_a_document_another_process_pruned_is_still_written(
    store: Store,
):
    first = await store.create_run(document=DOCUMENT)
    await store.finish_run(first.id, "completed")
    other = await Store.open(store.url, blob_dir=store.blob_dir.parent)
    try:  # another process prunes: this store still thinks it has the document
        assert (await other.prune(timedelta(0))).documents == 1
    finally:
        await other.close()
    new = await store.prepare_run(document=DOCUMENT)
    await store.write_created(new, events=events_of(new.run_id))
    assert await store.run_document(new.run_id) == DOCUMENT
    assert (await store.get_run(new.run_id)).last_seq == 2
