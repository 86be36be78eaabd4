"""Connection pools kept across runs: one engine per (event loop, URL).

Opening a connection to Postgres or MariaDB costs a round trip or three and a login;
a flow that queries on every run should not pay it each time. Engines are keyed by the
running loop too, because a driver's connections belong to the loop that opened them.
SQLite opens a file, which is cheap: it gets a fresh connection per statement (NullPool),
so nothing set on one lingers for the next.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

MAX_ENGINES = 16  # per loop; the least recently used is disposed beyond it
POOL_SIZE = 5

_engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, OrderedDict[str, AsyncEngine]]
_engines = weakref.WeakKeyDictionary()


async def engine_for(url: URL) -> AsyncEngine:
    loop = asyncio.get_running_loop()
    engines = _engines.setdefault(loop, OrderedDict())
    key = url.render_as_string(hide_password=False)
    engine = engines.get(key)
    if engine is not None:
        engines.move_to_end(key)
        return engine
    if url.get_backend_name() == "sqlite":
        engine = create_async_engine(url, poolclass=NullPool)
    else:
        engine = create_async_engine(
            url, pool_size=POOL_SIZE, max_overflow=POOL_SIZE, pool_pre_ping=True, pool_recycle=1800
        )
    engines[key] = engine
    while len(engines) > MAX_ENGINES:
        _, oldest = engines.popitem(last=False)
        await oldest.dispose()
    return engine


async def close_pools() -> None:
    """Close every pooled connection opened on the running loop (at shutdown, in tests)."""
    engines = _engines.pop(asyncio.get_running_loop(), OrderedDict())
    for engine in engines.values():
        await engine.dispose()


def pooled() -> int:
    """How many engines the running loop holds (for tests)."""
    return len(_engines.get(asyncio.get_running_loop(), ()))
