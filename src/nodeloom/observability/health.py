"""Whether a server can do its work: its store answers, its queue (if it has one)
answers, and workers have been seen recently. `GET /api/health` answers `report()`.

The report names each part and whether it is healthy, with fixed codes only: no URL,
host name or driver message (it is served without a token); the reasons go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from nodeloom.observability import queue as queues
from nodeloom.observability.fleet import LIVE_SECONDS

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 3.0


class _Worker(Protocol):
    role: str


class HealthStore(Protocol):
    """What the check needs of the store (nodeloom.store.Store has it)."""

    async def ping(self) -> None: ...

    async def list_workers(
        self, *, seen_within: float | None = ..., stopped: bool = ...
    ) -> Sequence[_Worker]: ...


@dataclass
class Health:
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def failing(self) -> list[str]:
        return [name for name, check in self.checks.items() if not check["ok"]]

    @property
    def ok(self) -> bool:
        return not self.failing

    def to_json(self) -> dict[str, Any]:
        return {
            "status": "ok" if self.ok else "failing",
            "failing": self.failing,
            "checks": self.checks,
        }


async def report(
    store: HealthStore, queue_url: str | None, *, live_seconds: float = LIVE_SECONDS
) -> Health:
    """Check the store (`SELECT 1`), the queue (Redis PING) and the registry, at once,
    each within TIMEOUT_SECONDS. Workers are required only with a queue: without one
    the server runs its runs itself."""
    health = Health()
    store_check, queue_check, workers = await asyncio.gather(
        _store(store),
        _queue(queue_url),
        _bounded("workers", store.list_workers(seen_within=live_seconds)),
    )
    health.checks["store"] = store_check
    health.checks["queue"] = queue_check
    if isinstance(workers, BaseException):
        health.checks["workers"] = {"ok": False, "error": "unknown", "live": None}
        return health
    roles: dict[str, int] = {}
    for worker in workers:
        roles[worker.role] = roles.get(worker.role, 0) + 1
    needed = queue_url is not None
    check: dict[str, Any] = {"ok": True, "live": len(workers), "roles": roles}
    if needed and not roles.get("worker"):
        check.update(ok=False, error="no_worker_seen")
    health.checks["workers"] = check
    return health


async def _store(store: HealthStore) -> dict[str, Any]:
    result = await _bounded("store", store.ping())
    if isinstance(result, BaseException):
        return {"ok": False, "error": _code(result)}
    return {"ok": True}


async def _queue(url: str | None) -> dict[str, Any]:
    if url is None:
        return {"ok": True, "configured": False}
    result = await _bounded("queue", queues.ping(url))
    if isinstance(result, BaseException):
        return {"ok": False, "configured": True, "error": _code(result)}
    return {"ok": True, "configured": True}


async def _bounded(part: str, work: Any) -> Any:
    """`work`'s result, or the exception it raised (logged), within TIMEOUT_SECONDS."""
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            return await work
    except Exception as exc:
        log.warning("health: %s failing: %s", part, exc)
        return exc


def _code(exc: BaseException) -> str:
    return "timeout" if isinstance(exc, TimeoutError) else "unreachable"
