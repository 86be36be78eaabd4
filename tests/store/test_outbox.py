"""The outbox (`pending_jobs`): a resume or re-run job recorded before it is enqueued is
found by the sweep once old enough, taken exactly once by the deliveries that race for
it, and kept when the store is opened again; on SQLite and on Postgres."""

from __future__ import annotations

import asyncio

import pytest

from nodeloom.fleet.jobs import Job
from nodeloom.store import Store


async def record(store: Store, job: Job) -> None:
    await store.add_pending_job(job.job_id, job.run_id, job.kind, job.to_json())


async def test_a_recorded_job_is_found_whole_once_older_than_the_sweep_age(store: Store):
    job = Job.resume("r1", {"q": {"name": "Ada", "tags": ["x"]}}, replay_external=True)
    await record(store, job)
    assert await store.pending_jobs(older_than=60) == []  # too young for the sweep
    await asyncio.sleep(0.05)
    [pending] = await store.pending_jobs(older_than=0.02)
    assert (pending.job_id, pending.run_id, pending.kind) == (job.job_id, "r1", "resume")
    assert Job.from_json(pending.payload) == job  # the answers, and the same job id
    assert pending.created_at.tzinfo is not None


async def test_the_pending_jobs_come_oldest_first_up_to_the_limit(store: Store):
    jobs = [Job.rerun("source", "n1", new_run_id=f"new{i}") for i in range(3)]
    for job in jobs:
        await record(store, job)
        await asyncio.sleep(0.01)
    assert [p.run_id for p in await store.pending_jobs()] == ["new0", "new1", "new2"]
    assert [p.run_id for p in await store.pending_jobs(limit=2)] == ["new0", "new1"]


async def test_a_job_is_taken_once_however_many_deliveries_race_for_it(store: Store):
    job = Job.resume("r1", {"q": "yes"})
    await record(store, job)
    taken = await asyncio.gather(*(store.take_pending_job(job.job_id) for _ in range(5)))
    assert sorted(taken) == [False] * 4 + [True]
    assert await store.pending_jobs() == []
    assert await store.take_pending_job(job.job_id) is False  # a late copy takes nothing


async def test_taking_one_job_leaves_the_others_of_the_same_run(store: Store):
    first, second = Job.resume("r1", {"a": 1}), Job.resume("r1", {"b": 2})
    await record(store, first)
    await record(store, second)
    assert await store.take_pending_job(first.job_id) is True
    assert [p.job_id for p in await store.pending_jobs()] == [second.job_id]


async def test_a_start_or_a_job_recorded_twice_is_refused_naming_the_job(store: Store):
    start = Job.start("r1", flow_id="f1")
    with pytest.raises(ValueError, match=f"kind 'start' for job {start.job_id}"):
        await record(store, start)
    job = Job.resume("r1")
    await record(store, job)
    with pytest.raises(ValueError, match=f"job {job.job_id} is in the outbox already"):
        await record(store, job)
    assert [p.job_id for p in await store.pending_jobs()] == [job.job_id]


async def test_a_pending_job_survives_the_store_being_closed_and_opened_again(store: Store):
    job = Job.rerun("source", "n2", new_run_id="new")
    await record(store, job)
    again = await Store.open(store.url, blob_dir=store.blob_dir)
    try:
        [pending] = await again.pending_jobs()
        assert Job.from_json(pending.payload) == job
        assert await again.take_pending_job(job.job_id) is True
    finally:
        await again.close()
    assert await store.pending_jobs() == []
