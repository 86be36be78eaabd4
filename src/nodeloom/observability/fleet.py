"""A process's place in the worker registry: `WorkerBeat` upserts its row every few
seconds with its load and a snapshot of its run metrics, and marks it stopped when the
process exits cleanly. `nodeloom serve` runs one (role "server"); a `nodeloom worker`
process runs one per process (role "worker"):

    metrics = RunMetrics()
    runs = RunService(store, registry, observer=metrics)
    async with WorkerBeat(store, role="worker", concurrency=10,
                          load=lambda: len(runs.running()), metrics=metrics):
        ...  # take and run runs

`GET /api/health` counts the workers seen recently, `GET /metrics` adds their counts up,
`nodeloom workers` lists them (docs/observability.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from nodeloom.observability.metrics import RunMetrics

log = logging.getLogger(__name__)

BEAT_SECONDS = 5.0
# A worker not seen for this long is not counted as alive (three beats missed).
LIVE_SECONDS = 3 * BEAT_SECONDS


class WorkerRegistry(Protocol):
    """What WorkerBeat needs of the store (nodeloom.store.Store has it)."""

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
    ) -> None: ...

    async def stop_worker(
        self, worker_id: str, *, metrics: Mapping[str, Any] | None = None
    ) -> None: ...


def worker_id(role: str) -> str:
    """A new id for a process: `<role>-<host>-<pid>-<6 hex>` (unique across restarts)."""
    return f"{role}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class WorkerBeat:
    """Keeps this process's registry row fresh. `load()`: its runs in flight now;
    `metrics`: its RunMetrics (its counts go into the row). `start()` writes the row at
    once (a failure then is raised: the store is unusable), then every `every` seconds
    in the background (a failed beat is logged and retried at the next); `stop()` marks
    the row stopped. Also an async context manager."""

    def __init__(
        self,
        store: WorkerRegistry,
        *,
        role: str = "worker",
        concurrency: int = 1,
        load: Callable[[], int] = lambda: 0,
        metrics: RunMetrics | None = None,
        id: str | None = None,
        every: float = BEAT_SECONDS,
    ) -> None:
        self.store = store
        self.role = role
        self.concurrency = concurrency
        self.load = load
        self.metrics = metrics
        self.id = id or worker_id(role)
        self.every = every
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.started_at = datetime.now(UTC)
        self._task: asyncio.Task[None] | None = None

    async def beat(self) -> None:
        """Write the row now."""
        await self.store.beat_worker(
            self.id,
            host=self.host,
            pid=self.pid,
            role=self.role,
            concurrency=self.concurrency,
            in_flight=self.load(),
            metrics=self.metrics.snapshot() if self.metrics is not None else None,
            started_at=self.started_at,
        )

    async def start(self) -> WorkerBeat:
        await self.beat()
        self._task = asyncio.create_task(self._loop(), name=f"nodeloom-beat-{self.id}")
        return self

    async def stop(self) -> None:
        """Stop beating and mark the row stopped (its last counts kept)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        snapshot = self.metrics.snapshot() if self.metrics is not None else None
        try:
            await self.store.stop_worker(self.id, metrics=snapshot)
        except Exception as exc:  # the row ages out of the live list by itself
            log.warning("could not mark worker %s stopped: %s", self.id, exc)

    async def __aenter__(self) -> WorkerBeat:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _loop(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(self.every)
            try:
                await self.beat()
            except Exception as exc:
                if not failing:
                    log.warning("worker %s: heartbeat not written: %s", self.id, exc)
                failing = True
            else:
                if failing:
                    log.info("worker %s: heartbeat written again", self.id)
                failing = False
