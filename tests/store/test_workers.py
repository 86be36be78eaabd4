"""The worker registry: a beat inserts or refreshes a process's row, the live list holds
only processes seen recently and not stopped, a clean stop keeps the last counts; on
SQLite and on Postgres."""

from __future__ import annotations

import asyncio

from nodeloom.observability.fleet import WorkerBeat
from nodeloom.observability.metrics import RunMetrics
from nodeloom.store import Store


async def beat(store: Store, worker_id: str, in_flight: int = 0, **fields: object) -> None:
    values: dict = {"host": "h1", "pid": 7, "role": "worker", "concurrency": 4}
    values.update(fields)
    await store.beat_worker(worker_id, in_flight=in_flight, **values)


async def test_a_beat_inserts_a_row_and_the_next_refreshes_it(store: Store):
    await beat(store, "w1", 1, metrics={"v": 1, "runs": {"started": 2}})
    first = (await store.list_workers())[0]
    await asyncio.sleep(0.01)
    await beat(store, "w1", 3, metrics={"v": 1, "runs": {"started": 5}})
    [row] = await store.list_workers()
    assert (row.id, row.host, row.pid, row.role, row.concurrency) == ("w1", "h1", 7, "worker", 4)
    assert row.in_flight == 3 and row.metrics["runs"] == {"started": 5}
    assert row.started_at == first.started_at and row.last_seen > first.last_seen
    assert row.stopped_at is None


async def test_the_live_list_leaves_out_silent_and_stopped_workers_busiest_first(store: Store):
    await beat(store, "quiet", 0)
    await beat(store, "busy", 5)
    await beat(store, "gone", 1)
    await store.stop_worker("gone", metrics={"v": 1, "runs": {"completed": 9}})
    assert [w.id for w in await store.list_workers()] == ["busy", "quiet"]
    await asyncio.sleep(0.3)
    await beat(store, "quiet", 0)
    assert [w.id for w in await store.list_workers(seen_within=0.2)] == ["quiet"]
    everyone = {w.id: w for w in await store.list_workers(seen_within=None, stopped=True)}
    assert set(everyone) == {"busy", "quiet", "gone"}
    stopped = everyone["gone"]
    assert stopped.stopped_at is not None and stopped.in_flight == 0
    assert stopped.metrics["runs"] == {"completed": 9}  # its counts stay for the totals


async def test_a_stopped_worker_that_beats_again_is_live_again(store: Store):
    await beat(store, "w1")
    await store.stop_worker("w1")
    assert await store.list_workers() == []
    await beat(store, "w1")
    assert [w.id for w in await store.list_workers()] == ["w1"]


async def test_forgetting_drops_only_rows_unseen_for_long(store: Store):
    await beat(store, "old")
    await asyncio.sleep(0.3)
    await beat(store, "new")
    assert await store.forget_workers(unseen_for=0.2) == 1
    assert [w.id for w in await store.list_workers(seen_within=None, stopped=True)] == ["new"]


async def test_a_worker_beat_writes_its_load_and_counts_and_marks_its_row_stopped(store: Store):
    load = [2]
    metrics = RunMetrics()
    metrics.observe("sleep", 0.03)
    async with WorkerBeat(
        store, role="worker", concurrency=8, load=lambda: load[0], metrics=metrics, every=0.05
    ) as worker:
        [row] = await store.list_workers()
        assert (row.id, row.in_flight, row.concurrency) == (worker.id, 2, 8)
        assert row.metrics["nodes"]["sleep"]["sum"] == 0.03
        load[0] = 5
        deadline = asyncio.get_running_loop().time() + 5
        while (await store.list_workers())[0].in_flight != 5:  # the next beat brings it
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
    assert await store.list_workers() == []
    [row] = await store.list_workers(stopped=True)
    assert row.stopped_at is not None and row.in_flight == 0


async def test_the_store_answers_a_ping(store: Store):
    await store.ping()
