"""A SQLite file's writer on the event loop's thread (`Database.write_sync`, the group
commit's hot path): a pysqlite connection of its own that never waits for a lock (busy
timeout 0; the caller sends a busy transaction to the writer thread instead) and never
checkpoints the WAL itself (`wal_autocheckpoint=0`: a checkpoint fsyncs the database
file). The writer thread runs a passive checkpoint every CHECKPOINT_EVERY commits, and at
most CHECKPOINT_SECONDS after a commit: with `synchronous=NORMAL` that is when a commit
reaches the disk (what a power loss can lose, docs/store.md). If writes went on while it
ran, a second one copies them with writers held for that moment, so that the WAL is
started again from its beginning (`_checkpoint_and_catch_up`).

A transaction runs either SQLAlchemy work on a Connection, or bare work on the sqlite3
connection itself between `BEGIN IMMEDIATE` and `COMMIT` (no SQLAlchemy in between: about
40 µs less per statement); a driver error of bare work is raised as SQLAlchemy's, so
callers see one kind of error either way.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

T = TypeVar("T")

CHECKPOINT_EVERY = 64  # inline commits between two passive WAL checkpoints, at most
CHECKPOINT_SECONDS = 1.0  # from a commit to the checkpoint that syncs it, at most


class InlineWriter:
    """Transactions on the event loop's thread; WAL checkpoints in `thread`, on
    `checkpointer`'s connection."""

    def __init__(
        self,
        engine: Engine,
        checkpointer: Engine,
        thread: ThreadPoolExecutor,
        writers: asyncio.Lock,
    ) -> None:
        self.engine = engine
        self._checkpointer = checkpointer
        self._thread = thread
        self._writers = writers  # held by every write of the store
        self._bare: Any = None  # the pooled connection whose sqlite3 connection bare work gets
        self._commits = 0  # commits since the last checkpoint
        self._checkpoint: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def transaction(
        self, work: Callable[[Connection], T], bare: Callable[[sqlite3.Connection], T] | None
    ) -> T:
        """`bare(connection)` if given, else `work(conn)`, in one write transaction."""
        if bare is None:
            with self.engine.begin() as conn:
                result = work(conn)
        else:
            result = self._bare_transaction(bare)
        self._committed()
        return result

    def _bare_transaction(self, bare: Callable[[sqlite3.Connection], T]) -> T:
        if self._bare is None:
            self._bare = self.engine.raw_connection()  # its connect listener set it up
        connection: sqlite3.Connection = self._bare.driver_connection
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                result = bare(connection)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise DBAPIError.instance(None, None, exc, sqlite3.Error) from exc
        return result

    def _committed(self) -> None:
        """A passive WAL checkpoint in the writer thread (it syncs what was committed to
        disk; it never blocks a writer) after CHECKPOINT_EVERY commits, or
        CHECKPOINT_SECONDS after the first commit since the last one, whichever is first."""
        self._commits += 1
        if self._commits >= CHECKPOINT_EVERY:
            self._start_checkpoint()
        elif self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(CHECKPOINT_SECONDS, self._start_checkpoint)

    def _start_checkpoint(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._commits == 0:
            return
        if self._checkpoint is not None and not self._checkpoint.done():
            return
        self._commits = 0
        self._checkpoint = asyncio.ensure_future(self._checkpoint_and_catch_up())

    async def _checkpoint_and_catch_up(self) -> None:
        """A passive checkpoint while writers go on, then one more with writers held,
        which copies only what they wrote meanwhile (nothing, often): the WAL is then
        wholly in the database file, and the next writer starts it again from its
        beginning. Without that second one, the checkpoints of a store written without a
        pause never catch up with its writers, and its WAL grows without end (85 KB per
        recorded 10-node run)."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._passive_checkpoint)
        async with self._writers:
            await loop.run_in_executor(self._thread, self._passive_checkpoint)

    def _passive_checkpoint(self) -> None:
        """Copy what the WAL holds to the database file, never waiting for a reader or a
        writer."""
        raw = self._checkpointer.raw_connection()  # autocommit (isolation_level None)
        try:
            raw.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            pass  # the next one catches up
        finally:
            raw.close()

    async def close(self) -> None:
        """Stop the timer, wait for a checkpoint under way, close the connection."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._checkpoint is not None:
            await asyncio.gather(self._checkpoint, return_exceptions=True)
        if self._bare is not None:
            self._bare.close()
            self._bare = None
        self.engine.dispose()
