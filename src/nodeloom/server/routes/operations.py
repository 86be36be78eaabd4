"""Operations: `GET /api/health` (store, queue, workers; no token, no detail worth
hiding) and `GET /metrics` (Prometheus text; the API token). The server's own place in
the worker registry (a WorkerBeat, role "server") and its RunMetrics live in
`Operations`, opened with the app (docs/observability.md)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from nodeloom.observability import health as checks
from nodeloom.observability import queue as queues
from nodeloom.observability.fleet import LIVE_SECONDS, WorkerBeat
from nodeloom.observability.metrics import CONTENT_TYPE, RunMetrics
from nodeloom.runs import RunService
from nodeloom.server.config import ServerConfig
from nodeloom.store import Store, WorkerRecord

log = logging.getLogger("nodeloom.server")

health_router = APIRouter(tags=["server"])  # no token
metrics_router = APIRouter(tags=["server"])  # the API token


@dataclass
class Operations:
    """What the operations routes read: the store, this server's metrics and beat, and
    the queue's URL (None: runs run in this process)."""

    store: Store
    runs: RunService
    metrics: RunMetrics
    beat: WorkerBeat
    queue_url: str | None

    @classmethod
    async def open(cls, config: ServerConfig, store: Store, runs: RunService) -> Operations:
        """Join the worker registry (role "server"; its load: the runs running here)."""
        if not isinstance(runs.observer, RunMetrics):
            raise TypeError("the server's RunService needs a RunMetrics observer")
        metrics = runs.observer
        beat = WorkerBeat(
            store, role="server", concurrency=0, load=lambda: len(runs.running()), metrics=metrics
        )
        await beat.start()
        return cls(store, runs, metrics, beat, queues.queue_url(config))

    async def aclose(self) -> None:
        await self.beat.stop()


async def operations(request: Request) -> Operations:
    found: Operations = request.app.state.operations
    return found


Ops = Annotated[Operations, Depends(operations)]


@health_router.get("/api/health", responses={503: {"description": "a part is failing"}})
async def health(ops: Ops) -> JSONResponse:
    """Whether the store answers, the queue (when there is one) answers, and workers
    were seen recently: 200 when all do, else 503 naming the failing parts. No token:
    it shows only fixed codes and counts."""
    report = await checks.report(ops.store, ops.queue_url)
    return JSONResponse(report.to_json(), status_code=200 if report.ok else 503)


@metrics_router.get("/metrics", response_class=Response)
async def metrics(ops: Ops) -> Response:
    """Run counts, node durations, runs in flight per worker and queue depth, in the
    Prometheus text format, for the whole fleet (docs/observability.md)."""
    rows, depths = await asyncio.gather(_rows(ops.store), _depths(ops.queue_url))
    live = {row.id for row in rows if row.stopped_at is None and _recent(row)}
    body = ops.metrics.render(
        ops.beat.id, len(ops.runs.running()), rows=rows, live=live, queue_depths=depths
    )
    return Response(body, media_type=CONTENT_TYPE)


async def _rows(store: Store) -> list[WorkerRecord]:
    """Every registry row (stopped ones too: their counts stay in the totals); none
    when the store cannot be read (this process's own counts are still served)."""
    try:
        return await store.list_workers(seen_within=None, stopped=True)
    except Exception as exc:
        log.warning("metrics: the worker registry could not be read: %s", exc)
        return []


async def _depths(url: str | None) -> dict[str, int] | None:
    if url is None:
        return None
    try:
        return await queues.depths(url)
    except Exception as exc:
        log.warning("metrics: the queue's depth could not be read: %s", exc)
        return None


def _recent(row: WorkerRecord) -> bool:
    return (datetime.now(UTC) - row.last_seen).total_seconds() <= LIVE_SECONDS
