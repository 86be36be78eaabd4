"""The Store's outbox (table `pending_jobs`): a server started with `--queue` records each
resume or re-run job here before it enqueues it (`add_pending_job`); the worker that takes
the job deletes its row (`take_pending_job`: exactly one taker wins), and a worker's sweep
enqueues again the jobs left untaken too long (`pending_jobs`): their message was lost,
e.g. Redis restarted without its data. A start needs no row: its `queued` run is its
record. See docs/deployment.md#faults.

    await store.add_pending_job(job.job_id, job.run_id, job.kind, job.to_json())
    if await store.take_pending_job(job.job_id):     # this delivery takes the job
        ...
    for pending in await store.pending_jobs(older_than=30):
        ...                                          # enqueue pending.payload again
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import Row, delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.access import Access, now
from nodeloom.store.packing import dumps, loads
from nodeloom.store.records import PendingJobRecord
from nodeloom.store.schema import PendingJob

PENDING_KINDS = ("resume", "rerun")


class Outbox(Access):
    """Jobs recorded before they are enqueued (table `pending_jobs`)."""

    async def add_pending_job(
        self, job_id: str, run_id: str, kind: str, payload: Mapping[str, Any]
    ) -> None:
        """Record a job about to be enqueued: `payload` is the whole job (what the sweep
        enqueues again). Raises ValueError for a kind that is not a resume or re-run, or
        a `job_id` recorded already."""
        if kind not in PENDING_KINDS:
            raise ValueError(
                f"the outbox holds resume and re-run jobs ({', '.join(PENDING_KINDS)}); got "
                f"kind {kind!r} for job {job_id}: a start is recorded as its `queued` run"
            )
        row = {
            "job_id": job_id,
            "run_id": run_id,
            "kind": kind,
            "payload": dumps(dict(payload)),
            "created_at": now(),
        }
        statement = insert(PendingJob).values(**row)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(statement)

        try:
            await self._db.write(work)
        except IntegrityError as exc:
            raise ValueError(f"job {job_id} is in the outbox already") from exc

    async def take_pending_job(self, job_id: str) -> bool:
        """Delete the job's row: True if it was there (this caller takes the job), False
        if it was not (taken already, by another delivery of the same job)."""
        statement = delete(PendingJob).where(PendingJob.job_id == job_id)

        async def work(conn: AsyncConnection) -> bool:
            return bool((await conn.execute(statement)).rowcount)

        return await self._db.write(work)

    async def pending_jobs(
        self, *, older_than: float = 0.0, limit: int = 1000
    ) -> list[PendingJobRecord]:
        """Jobs recorded at least `older_than` seconds ago and not taken, oldest first."""
        cutoff = now() - timedelta(seconds=older_than)
        query = (
            select(PendingJob)
            .where(PendingJob.created_at <= cutoff)
            .order_by(PendingJob.created_at, PendingJob.job_id)
            .limit(limit)
        )

        async def work(conn: AsyncConnection) -> list[Row[Any]]:
            return list(await conn.execute(query))

        return [_record(row) for row in await self._db.read(work)]


def _record(row: Row[Any]) -> PendingJobRecord:
    payload = loads(row.payload)
    return PendingJobRecord(
        job_id=row.job_id,
        run_id=row.run_id,
        kind=row.kind,
        payload=payload if isinstance(payload, dict) else {},
        created_at=row.created_at,
    )
