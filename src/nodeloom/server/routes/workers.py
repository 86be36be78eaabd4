"""`GET /api/workers` (the API token): the processes of the worker registry with their
load, and the run queue's depth, as JSON (the UI's Operations page; the CLI's
`nodeloom workers` reads the same rows). Fixed codes only for a failing part: never the
queue's or the store's URL (docs/api.md)."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from nodeloom.observability import queue as queues
from nodeloom.observability.fleet import LIVE_SECONDS
from nodeloom.server.routes.operations import Ops
from nodeloom.store import WorkerRecord

log = logging.getLogger("nodeloom.server")

router = APIRouter(tags=["server"])

TIMEOUT_SECONDS = 3.0


class WorkerModel(BaseModel):
    """One process of the registry: a `nodeloom serve` (role "server") or one process of
    a `nodeloom worker` (role "worker"; a worker with --processes N has N rows)."""

    id: str = Field(description="<role>-<host>-<pid>-<6 hex>, new at each start")
    role: str = Field(description='"server" or "worker"')
    host: str
    pid: int
    concurrency: int = Field(description="runs at once it takes off the queue (0: a server)")
    in_flight: int = Field(description="its runs going on at its last beat")
    started_at: str
    last_seen: str
    seen_seconds_ago: float = Field(description="seconds since its last beat")
    stopped_at: str | None = Field(description="set when it exited cleanly")
    runs: dict[str, int] = Field(
        description="its run counts since it started (started, completed, failed, ...)"
    )


class QueueModel(BaseModel):
    """The run queue: none (runs run in the server's process), or Redis and its depth."""

    configured: bool = Field(description="false: in-process mode, the server runs its runs")
    ok: bool
    error: str | None = Field(None, description='"unreachable" or "timeout" when not ok')
    depths: dict[str, int] | None = Field(
        None, description="waiting messages per queue name (the fleet's: `nodeloom`)"
    )


class WorkerList(BaseModel):
    workers: list[WorkerModel] = Field(description="busiest first, then by id")
    queue: QueueModel
    live_seconds: float = Field(description="a process not seen for longer is not listed")


@router.get("/api/workers", response_model=WorkerList)
async def list_workers(
    ops: Ops,
    show_all: Annotated[
        bool, Query(alias="all", description="also processes that stopped or went silent")
    ] = False,
) -> WorkerList:
    """The servers and workers seen within `live_seconds` (all of them with `?all=true`)
    with their load, and the queue's depth (docs/observability.md)."""
    within = None if show_all else LIVE_SECONDS
    rows, queue = await asyncio.gather(
        ops.store.list_workers(seen_within=within, stopped=show_all), _queue(ops.queue_url)
    )
    now = datetime.now(UTC)
    return WorkerList(
        workers=[_worker(row, now) for row in rows], queue=queue, live_seconds=LIVE_SECONDS
    )


def _worker(row: WorkerRecord, now: datetime) -> WorkerModel:
    shown = row.to_json()
    runs = row.metrics.get("runs", {})
    counts = {
        str(k): int(v)
        for k, v in (runs.items() if isinstance(runs, dict) else ())
        if isinstance(v, int | float) and not isinstance(v, bool)
    }
    return WorkerModel(
        **shown,
        seen_seconds_ago=round(max(0.0, (now - row.last_seen).total_seconds()), 1),
        runs=counts,
    )


async def _queue(url: str | None) -> QueueModel:
    if url is None:
        return QueueModel(configured=False, ok=True)
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            depths = await queues.depths(url)
    except Exception as exc:  # the reason goes to the log, never the URL to the client
        log.warning("workers: the queue's depth could not be read: %s", exc)
        code = "timeout" if isinstance(exc, TimeoutError) else "unreachable"
        return QueueModel(configured=True, ok=False, error=code)
    return QueueModel(configured=True, ok=True, depths=depths)
