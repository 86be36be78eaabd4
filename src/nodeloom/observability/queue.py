"""The run queue as operations see it: whether one is configured, whether Redis answers,
and how many messages wait in it. Redis is imported only when a queue is configured.

The queue is Dramatiq's Redis broker: each queue `Q` is a list `dramatiq:Q` of waiting
message ids (`dramatiq:Q.DQ` for delayed ones); a message a worker has taken is no longer
in it. Depth here is the length of those lists.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

QUEUE_VARIABLE = "NODELOOM_QUEUE_URL"
FLEET_QUEUE = "nodeloom"  # the queue `nodeloom worker`s take runs from (fleet.broker.QUEUE_NAME)
NAMESPACE = "dramatiq"
TIMEOUT_SECONDS = 2.0


def queue_url(config: Any = None) -> str | None:
    """The queue's URL: the server config's (its `queue_url` or `queue` field, when the
    config has one), else NODELOOM_QUEUE_URL; None when there is no queue."""
    for name in ("queue_url", "queue"):
        value = getattr(config, name, None)
        if isinstance(value, str) and value:
            return value
    return os.environ.get(QUEUE_VARIABLE) or None


def _client(url: str) -> Any:
    import redis.asyncio as redis

    return redis.from_url(
        url,
        socket_connect_timeout=TIMEOUT_SECONDS,
        socket_timeout=TIMEOUT_SECONDS,
        retry_on_timeout=False,
    )


async def ping(url: str) -> None:
    """One PING; raises (OSError, redis' errors) if Redis does not answer."""
    client = _client(url)
    try:
        await client.ping()
    finally:
        await client.aclose()


async def depths(url: str, known: Iterable[str] = (FLEET_QUEUE,)) -> dict[str, int]:
    """Waiting messages per queue: the `known` queues (0 when empty: Redis drops an
    empty list) and every other queue list found in the broker's namespace."""
    client = _client(url)
    try:
        found = {name: 0 for name in known}
        names = [
            key.decode() if isinstance(key, bytes) else str(key)
            async for key in client.scan_iter(match=f"{NAMESPACE}:*", _type="list", count=100)
        ]
        if names:
            async with client.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.llen(name)
                lengths = await pipe.execute()
            for name, length in zip(names, lengths, strict=True):
                found[name.removeprefix(f"{NAMESPACE}:")] = int(length)
        return found
    finally:
        await client.aclose()
