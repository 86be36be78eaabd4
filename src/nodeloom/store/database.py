"""The connection to the database: engines, one writer at a time, retries, and the
translation of driver errors into the store's errors.

SQLite: WAL journal, `synchronous=NORMAL`, a busy timeout, foreign keys on. Writes go
through one connection guarded by an asyncio lock (one writer per process) and start with
`BEGIN IMMEDIATE`, so a writer waits for the file lock up front instead of failing half-way;
reads use a second pool and never block writers. Another process holding the lock makes a
write wait (the busy timeout) and then retry, up to `lock_timeout` seconds in all.
Postgres: one pooled engine; deadlocks and serialisation failures are retried the same way.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from nodeloom.store.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from nodeloom.store.url import describe, sqlite_file

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5_000
_BUSY = ("database is locked", "database is busy", "database table is locked")
_FULL = ("database or disk is full", "disk is full", "no space left on device")
_CORRUPT = ("file is not a database", "database disk image is malformed", "not a database")
_PG_RETRY = {"40001", "40P01"}  # serialization_failure, deadlock_detected
_PG_FULL = {"53100"}  # disk_full
# connection exceptions, no such database, authentication, out of memory or connections,
# shutdown
_PG_GONE_PREFIXES = ("08", "3D", "28", "53", "57P")


class Database:
    """Engines for one database URL. `read` and `write` run a callable in a connection."""

    def __init__(
        self,
        url: URL,
        *,
        pragmas: Mapping[str, str | int] | None = None,
        lock_timeout: float = 60.0,
    ) -> None:
        self.url = url
        self.path = sqlite_file(url)
        self.is_sqlite = url.drivername.startswith("sqlite")
        self.name = describe(url)
        self.lock_timeout = lock_timeout
        self._lock = asyncio.Lock()
        self._pragmas = dict(pragmas or {})
        memory = self.is_sqlite and self.path is None
        if self.is_sqlite:
            # Every transaction ends in an explicit COMMIT or ROLLBACK (and reads run in
            # autocommit): no reset is needed when a connection returns to the pool.
            pool: dict[str, Any] = (
                {"poolclass": StaticPool} if memory else {"pool_size": 1, "max_overflow": 0}
            )
            self.writer = create_async_engine(url, pool_reset_on_return=None, **pool)
            self._sqlite_setup(self.writer, write=True)
            if memory:
                self.reader = self.writer
            else:
                self.reader = create_async_engine(
                    url, pool_size=4, max_overflow=4, pool_reset_on_return=None
                )
                self._sqlite_setup(self.reader, write=False)
        else:
            self.writer = self.reader = create_async_engine(
                url, pool_size=5, max_overflow=10, pool_pre_ping=True
            )
        # A shared in-memory connection cannot read while another task writes on it.
        self._read_lock: asyncio.Lock | None = self._lock if memory else None

    def _sqlite_setup(self, engine: AsyncEngine, *, write: bool) -> None:
        pragmas = {
            "busy_timeout": min(BUSY_TIMEOUT_MS, int(self.lock_timeout * 1000)),
            "synchronous": "NORMAL",
            "foreign_keys": "ON",
            **self._pragmas,
        }
        if not write:
            pragmas["query_only"] = "ON"

        @event.listens_for(engine.sync_engine, "connect")
        def connect(dbapi_connection: Any, _record: Any) -> None:
            # SQLAlchemy emits BEGIN itself (below); the driver must not.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            if write and self.path is not None:
                cursor.execute("PRAGMA journal_mode=WAL")
            for key, value in pragmas.items():
                cursor.execute(f"PRAGMA {key}={value}")
            cursor.close()

        if write:

            @event.listens_for(engine.sync_engine, "begin")
            def begin(conn: Any) -> None:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

    async def write(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in one write transaction (retried whole if the database is busy)."""
        async with self._lock:
            return await self._retry(work, self.writer, begin=True)

    async def read(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in a read connection."""
        if self._read_lock is not None:
            async with self._read_lock:
                return await self._retry(work, self.reader, begin=False)
        return await self._retry(work, self.reader, begin=False)

    async def _retry(
        self,
        work: Callable[[AsyncConnection], Awaitable[T]],
        engine: AsyncEngine,
        *,
        begin: bool,
    ) -> T:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.01
        while True:
            try:
                if begin:
                    async with engine.begin() as conn:
                        return await work(conn)
                async with engine.connect() as conn:
                    return await work(conn)
            except (SQLAlchemyError, OSError, sqlite3.Error) as exc:
                if not self.is_transient(exc):
                    translated = self.translate(exc)
                    if translated is exc:
                        raise
                    raise translated from exc
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailableError(
                        f"{self.name} stayed locked by another writer for "
                        f"{self.lock_timeout:g} s; check for a stuck process using it, or "
                        "raise lock_timeout"
                    ) from exc
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)

    def is_transient(self, exc: BaseException) -> bool:
        """A busy SQLite file or a Postgres deadlock: the whole transaction may be retried."""
        if self.is_sqlite:
            return any(marker in _message(exc) for marker in _BUSY)
        return _sqlstate(exc) in _PG_RETRY

    def translate(self, exc: BaseException) -> BaseException:
        """The store's error for a driver error; other errors are returned unchanged."""
        if isinstance(exc, StoreError):
            return exc
        message = _message(exc)
        state = _sqlstate(exc)
        if any(m in message for m in _FULL) or state in _PG_FULL:
            return StoreFullError(
                f"{self.name} is full: the write was rolled back and nothing stored before "
                "was lost. Free disk space (or raise the database's size limit), or prune "
                f"old runs (`Store.prune`). Driver: {_first_line(exc)}"
            )
        if self.is_sqlite and any(m in message for m in _CORRUPT):
            return StoreCorruptError(
                f"{self.name} is damaged ({_first_line(exc)}). Restore it from a backup, "
                "or move it away so that nodeloom starts a new one"
            )
        if (
            isinstance(exc, OSError)
            or (isinstance(exc, DBAPIError) and exc.connection_invalidated)
            or (state is not None and state.startswith(_PG_GONE_PREFIXES))
            or "unable to open database file" in message
            or (not self.is_sqlite and "connection" in message)
        ):
            fix = (
                "Check that its folder exists and is writable"
                if self.is_sqlite
                else "Check that the server runs, that the database exists (createdb NAME) "
                "and that NODELOOM_DATABASE_URL is right"
            )
            return StoreUnavailableError(f"cannot use {self.name}: {_first_line(exc)}. {fix}")
        return exc

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()


def _message(exc: BaseException) -> str:
    parts = [str(exc)]
    orig = getattr(exc, "orig", None)
    if orig is not None:
        parts.append(str(orig))
    return " ".join(parts).lower()


def _sqlstate(exc: BaseException) -> str | None:
    for candidate in (exc, getattr(exc, "orig", None), getattr(exc, "__cause__", None)):
        if candidate is None:
            continue
        for attribute in ("pgcode", "sqlstate"):
            value = getattr(candidate, attribute, None)
            if isinstance(value, str):
                return value
    return None


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
