"""The queue between servers and workers: Dramatiq on Redis.

One queue (`nodeloom`) carries jobs (nodeloom.fleet.jobs) as one actor's messages. The
broker's heartbeat settles when a worker counts as dead: its unacknowledged messages
are then delivered to another worker (Dramatiq's own redelivery). Settings, from the
environment (milliseconds):

    NODELOOM_QUEUE_HEARTBEAT_MS     a worker silent this long is dead (default 15000)
    NODELOOM_QUEUE_MAINTENANCE      how many broker commands in a million also look for
                                    dead workers (default 50000, i.e. 5 %)
"""

from __future__ import annotations

import os
from typing import Any

from nodeloom.fleet.jobs import Job
from nodeloom.store.url import database_url

QUEUE_NAME = "nodeloom"
ACTOR_NAME = "nodeloom_job"
QUEUE_URL_VARIABLE = "NODELOOM_QUEUE_URL"
HEARTBEAT_MS = 15_000
MAINTENANCE = 50_000


class QueueConfigError(ValueError):
    """A queue deployment is misconfigured (its message says what to set)."""


def queue_url(given: str | None = None) -> str | None:
    """The queue's URL: `given`, else NODELOOM_QUEUE_URL, else None (no queue)."""
    url = given or os.environ.get(QUEUE_URL_VARIABLE) or None
    if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
        raise QueueConfigError(
            f"the queue URL must be a Redis URL (redis://HOST:PORT/DB); got {url!r}"
        )
    return url


def require_postgres(database: str | None, role: str) -> None:
    """A queue deployment keeps every run in a Postgres store that all servers and
    workers share: refuse SQLite with a message that says why and what to set."""
    url = database_url(database)
    if not url.drivername.startswith("postgresql"):
        raise QueueConfigError(
            f"{role} with a queue needs the Postgres run store: its servers and workers "
            "share every run's record, events and checkpoints through it (and its "
            f"LISTEN/NOTIFY carries events live); the store is {url.drivername.split('+')[0]} "
            f"({url.database}). Set NODELOOM_DATABASE_URL="
            "postgresql://USER:PASSWORD@HOST:PORT/DB (see docs/deployment.md), or drop "
            "--queue / NODELOOM_QUEUE_URL to run everything in this process"
        )


def make_broker(url: str, *, worker: bool = False) -> Any:
    """A RedisBroker for `url`; a worker's has the AsyncIO middleware (async actors)
    and no Retries or TimeLimit (a run may take hours; it is retried by redelivery and
    resumed from its checkpoints, see nodeloom.fleet.delivery)."""
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.middleware import AsyncIO, CurrentMessage, ShutdownNotifications

    middleware = [CurrentMessage(), ShutdownNotifications(), AsyncIO()] if worker else []
    return RedisBroker(
        url=url,
        middleware=middleware,
        heartbeat_timeout=int(os.environ.get("NODELOOM_QUEUE_HEARTBEAT_MS", HEARTBEAT_MS)),
        maintenance_chance=int(os.environ.get("NODELOOM_QUEUE_MAINTENANCE", MAINTENANCE)),
    )


def message_of(job: Job) -> Any:
    """The Dramatiq message that carries `job`."""
    from dramatiq import Message

    return Message(
        queue_name=QUEUE_NAME,
        actor_name=ACTOR_NAME,
        args=(job.to_json(),),
        kwargs={},
        options={},
    )


def enqueue(broker: Any, job: Job) -> None:
    """Put `job` on the queue (blocking: Redis's client is synchronous)."""
    broker.declare_queue(QUEUE_NAME)
    broker.enqueue(message_of(job))


def queue_depth(broker: Any) -> int:
    """How many jobs wait on the queue (a hook for metrics)."""
    return int(broker.client.llen(f"{broker.namespace}:{QUEUE_NAME}"))
