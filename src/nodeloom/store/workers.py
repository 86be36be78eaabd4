"""The Store's worker registry: each server or worker process upserts its row every few
seconds (`beat_worker`) with its load and a snapshot of its run metrics, and marks it
stopped on a clean exit (`stop_worker`). `list_workers` answers who is alive (seen within
N seconds), `GET /metrics` adds every row's counts up. The beating is done by
`nodeloom.operations.WorkerBeat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.access import Access, now
from nodeloom.store.packing import dumps, loads
from nodeloom.store.records import WorkerRecord
from nodeloom.store.schema import Worker


class Workers(Access):
    """The worker registry (table `workers`)."""

    async def beat_worker(
        self,
        worker_id: str,
        *,
        host: str,
        pid: int,
        role: str,
        concurrency: int,
        in_flight: int,
        metrics: Mapping[str, Any] | None = None,
        started_at: datetime | None = None,
    ) -> None:
        """Insert or refresh the worker's row: `last_seen` is now, its load and metrics
        replace the previous ones, and a row marked stopped is alive again."""
        at = now()
        values = {
            "id": worker_id,
            "host": host,
            "pid": pid,
            "role": role,
            "started_at": started_at or at,
            "last_seen": at,
            "stopped_at": None,
            "concurrency": concurrency,
            "in_flight": in_flight,
            "metrics": dumps(dict(metrics)) if metrics is not None else None,
        }
        insert = self._insert(Worker).values(**values)
        changed = {k: v for k, v in values.items() if k not in ("id", "started_at")}
        statement = insert.on_conflict_do_update(index_elements=["id"], set_=changed)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(statement)

        await self._db.write(work)

    async def stop_worker(
        self, worker_id: str, *, metrics: Mapping[str, Any] | None = None
    ) -> None:
        """Mark the worker stopped (a clean exit): no runs in flight, its last metrics
        kept, so fleet totals do not go down. An unknown id changes nothing."""
        values: dict[str, Any] = {"stopped_at": now(), "last_seen": now(), "in_flight": 0}
        if metrics is not None:
            values["metrics"] = dumps(dict(metrics))
        statement = update(Worker).where(Worker.id == worker_id).values(**values)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(statement)

        await self._db.write(work)

    async def list_workers(
        self, *, seen_within: float | None = 30.0, stopped: bool = False
    ) -> list[WorkerRecord]:
        """Workers seen within `seen_within` seconds (None: whenever), not stopped unless
        `stopped`; busiest first, then by id."""
        query = select(Worker)
        if seen_within is not None:
            query = query.where(Worker.last_seen >= now() - timedelta(seconds=seen_within))
        if not stopped:
            query = query.where(Worker.stopped_at.is_(None))
        query = query.order_by(Worker.in_flight.desc(), Worker.id)

        async def work(conn: AsyncConnection) -> list[Row[Any]]:
            return list(await conn.execute(query))

        return [_record(row) for row in await self._db.read(work)]

    async def forget_workers(self, *, unseen_for: float) -> int:
        """Delete the rows of workers not seen for `unseen_for` seconds (stopped or dead
        long ago); returns how many. Their counts leave the fleet totals (a counter reset
        for Prometheus)."""
        cutoff = now() - timedelta(seconds=unseen_for)
        statement = delete(Worker).where(Worker.last_seen < cutoff)

        async def work(conn: AsyncConnection) -> int:
            return int((await conn.execute(statement)).rowcount or 0)

        return await self._db.write(work)


def _record(row: Row[Any]) -> WorkerRecord:
    metrics = loads(row.metrics)
    return WorkerRecord(
        id=row.id,
        host=row.host,
        pid=row.pid,
        role=row.role,
        started_at=row.started_at,
        last_seen=row.last_seen,
        stopped_at=row.stopped_at,
        concurrency=row.concurrency,
        in_flight=row.in_flight,
        metrics=metrics if isinstance(metrics, dict) else {},
    )
