"""The connection to the database: engines, one writer at a time, retries, and the
translation of driver errors into the store's errors.

SQLite: WAL journal, `synchronous=NORMAL`, a busy timeout, foreign keys on. Writes are
guarded by an asyncio lock (one writer per process) and start with `BEGIN IMMEDIATE`, so a
writer waits for the file lock up front instead of failing half-way; reads use a second
pool and never block writers. Another process holding the lock makes a write wait (the
busy timeout) and then retry, up to `lock_timeout` seconds in all.
Postgres: one pooled engine (a connection idle for a second or more is pinged before
use); deadlocks and serialisation failures are retried the same way. Reads run in
autocommit (no BEGIN, no ROLLBACK: one round trip per statement).

`write` runs async work (aiosqlite: every statement is three trips to the driver's
thread). `write_sync` runs a plain synchronous transaction body, for the hot path (the
group commit of run records, `nodeloom.store.committer`). On a SQLite file it runs on the
event loop's own thread (`nodeloom.store.inline`), on a pysqlite connection of its own
that never waits for a lock: a WAL commit without fsync takes microseconds, while a
writer thread would wait for the GIL (up to the 5 ms switch interval, at every
statement) whenever the loop is busy. If another process holds the lock, the transaction
goes to a writer thread of its own instead, which waits for it (the busy timeout) and
retries; that thread also runs the WAL checkpoints.
Elsewhere `write_sync` runs through `run_sync`.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, AdaptedConnection, Connection, Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import StaticPool

from nodeloom.store.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from nodeloom.store.inline import InlineWriter
from nodeloom.store.url import describe, sqlite_file

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5_000
_BUSY = ("database is locked", "database is busy", "database table is locked")
_FULL = ("database or disk is full", "disk is full", "no space left on device")
_CORRUPT = ("file is not a database", "database disk image is malformed", "not a database")
# Postgres: connections a process's pool keeps, and how many more a burst may open.
# Ten kept: a burst of requests or a worker's ten runs in flight (its --concurrency)
# reuse them instead of connecting again (each connection is a forked backend and a
# login: 0.2-0.5 a run with 5 kept, in the fleet benchmark).
POOL_SIZE = 10
POOL_OVERFLOW = 10
PING_IDLE_SECONDS = 1.0  # a Postgres connection idle this long is pinged before use
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
        # A SQLite file's one-trip writer for write_sync, and the thread it runs in.
        self._sync_writer: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        # A SQLite file's writer on the event loop's thread (see the module docstring).
        self._inline: InlineWriter | None = None
        if self.is_sqlite:
            # Every transaction ends in an explicit COMMIT or ROLLBACK (and reads run in
            # autocommit): no reset is needed when a connection returns to the pool.
            pool: dict[str, Any] = (
                {"poolclass": StaticPool} if memory else {"pool_size": 1, "max_overflow": 0}
            )
            self.writer = create_async_engine(url, pool_reset_on_return=None, **pool)
            self._sqlite_setup(self.writer.sync_engine, write=True)
            if memory:
                self.reader = self.writer
            else:
                self.reader = create_async_engine(
                    url, pool_size=4, max_overflow=4, pool_reset_on_return=None
                )
                self._sqlite_setup(self.reader.sync_engine, write=False)
                self._sync_writer = create_engine(
                    url.set(drivername="sqlite"), pool_reset_on_return=None, **pool
                )
                self._sqlite_setup(self._sync_writer, write=True)
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="nodeloom-store-writer")
                inline = create_engine(
                    url.set(drivername="sqlite"), pool_reset_on_return=None, poolclass=StaticPool
                )
                self._sqlite_setup(inline, write=True, inline=True)
                self._inline = InlineWriter(inline, self._sync_writer, self._thread, self._lock)
        else:
            self.writer = self.reader = create_async_engine(
                url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW
            )
            _ping_when_idle(self.writer.sync_engine)
        # A shared in-memory connection cannot read while another task writes on it.
        self._read_lock: asyncio.Lock | None = self._lock if memory else None

    def _sqlite_setup(self, engine: Engine, *, write: bool, inline: bool = False) -> None:
        pragmas = {
            "busy_timeout": min(BUSY_TIMEOUT_MS, int(self.lock_timeout * 1000)),
            "synchronous": "NORMAL",
            "foreign_keys": "ON",
            **self._pragmas,
        }
        if not write:
            pragmas["query_only"] = "ON"
        if inline:  # on the event loop's thread: never wait, never checkpoint
            pragmas.update(busy_timeout=0, wal_autocheckpoint=0)

        @event.listens_for(engine, "connect")
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

            @event.listens_for(engine, "begin")
            def begin(conn: Any) -> None:
                dbapi = conn.connection.dbapi_connection
                if isinstance(dbapi, AdaptedConnection):
                    # aiosqlite: one trip to its thread (exec_driver_sql takes three)
                    dbapi.run_async(lambda driver: driver.execute("BEGIN IMMEDIATE"))
                else:
                    dbapi.execute("BEGIN IMMEDIATE")

    async def write(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in one write transaction (retried whole if the database is busy)."""

        async def attempt() -> T:
            async with self.writer.begin() as conn:
                return await work(conn)

        async with self._lock:
            return await self._retry(attempt)

    async def write_sync(
        self,
        work: Callable[[Connection], T],
        *,
        bare: Callable[[sqlite3.Connection], T] | None = None,
    ) -> T:
        """Run `work`, synchronous SQLAlchemy code, in one write transaction (retried
        whole if the database is busy), in one trip to the writer thread on a SQLite file.
        `work` must do nothing but database work: it may run outside the event loop.
        `bare`: the same work on a bare sqlite3 connection, which a SQLite file's writer
        on the event loop's thread runs instead (`nodeloom.store.inline`)."""
        if self._sync_writer is None or self._thread is None:

            async def via_async(conn: AsyncConnection) -> T:
                return await conn.run_sync(work)

            return await self.write(via_async)
        engine, thread = self._sync_writer, self._thread

        def transaction() -> T:
            with engine.begin() as conn:
                return work(conn)

        async def attempt() -> T:
            return await asyncio.get_running_loop().run_in_executor(thread, transaction)

        async with self._lock:
            if self._inline is not None:
                try:
                    return self._inline.transaction(work, bare)
                except (SQLAlchemyError, sqlite3.Error) as exc:
                    if not self.is_transient(exc):
                        translated = self.translate(exc)
                        if translated is exc:
                            raise
                        raise translated from exc
                    # Another process holds the lock: wait for it in the writer thread.
            return await self._retry(attempt)

    async def read(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in a read connection."""

        async def attempt() -> T:
            async with self.reader.connect() as conn:
                return await work(conn)

        async def autocommit() -> T:
            # No BEGIN before the first statement and no ROLLBACK when the connection
            # goes back to the pool: two round trips fewer per read. Under READ COMMITTED
            # each statement sees its own snapshot anyway, so a read's statements see
            # what they saw inside a transaction (the driver's setting is client-side).
            async with self.reader.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                return await work(conn)

        if not self.is_sqlite:
            return await self._retry(autocommit)
        if self._read_lock is not None:
            async with self._read_lock:
                return await self._retry(attempt)
        return await self._retry(attempt)

    async def _retry(self, attempt: Callable[[], Awaitable[T]]) -> T:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.01
        while True:
            try:
                return await attempt()
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
        if self._inline is not None:
            await self._inline.close()
        if self._sync_writer is not None and self._thread is not None:
            # Its connection belongs to its thread: close it there.
            await asyncio.get_running_loop().run_in_executor(
                self._thread, self._sync_writer.dispose
            )
            self._thread.shutdown()


def _ping_when_idle(engine: Engine) -> None:
    """Ping a pooled Postgres connection before use only if it sat in the pool for
    PING_IDLE_SECONDS or more (a dead one is replaced, as `pool_pre_ping` does). A
    connection used moments ago is only checked locally (the driver has seen the server
    hang up): a ping at every checkout is one more round trip per transaction (of a
    recorded run's two), and a connection that dies during a transaction fails it all
    the same, ping or not."""

    @event.listens_for(engine, "checkin")
    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        closed = getattr(getattr(dbapi_connection, "driver_connection", None), "is_closed", None)
        if closed is not None and closed():  # the server hung up: known without a trip
            raise DisconnectionError("the server closed a pooled connection")
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < PING_IDLE_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # the pool replaces the connection and checks out again
            raise DisconnectionError(f"a pooled connection is gone: {exc}") from exc


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
