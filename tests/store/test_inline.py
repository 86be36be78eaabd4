"""The SQLite file's writer on the event loop's thread (nodeloom.store.inline): bare work
on the sqlite3 connection commits or rolls back whole, and fails with SQLAlchemy's error,
as work on a SQLAlchemy connection does."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Connection, text
from sqlalchemy.exc import IntegrityError

from nodeloom.store import Store
from nodeloom.store.database import Database
from nodeloom.store.url import database_url


def rows(path: Path) -> list[int]:
    with sqlite3.connect(path) as connection:
        return [n for (n,) in connection.execute("SELECT n FROM t ORDER BY n")]


def not_this_way(conn: Connection) -> None:
    raise AssertionError("the bare work should have run")


async def test_bare_work_commits_and_a_failing_one_is_rolled_back_whole(tmp_path: Path):
    path = tmp_path / "inline.db"
    db = Database(database_url(f"sqlite:///{path}"))
    try:
        await db.write_sync(
            lambda conn: conn.execute(text("CREATE TABLE t (n INTEGER PRIMARY KEY)"))
        )

        def good(connection: sqlite3.Connection) -> None:
            connection.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])

        def bad(connection: sqlite3.Connection) -> None:
            connection.execute("INSERT INTO t VALUES (3)")
            connection.execute("INSERT INTO t VALUES (1)")  # taken: the whole write fails

        await db.write_sync(not_this_way, bare=good)
        with pytest.raises(IntegrityError, match="UNIQUE constraint failed"):
            await db.write_sync(not_this_way, bare=bad)
        assert rows(path) == [1, 2]  # nothing of the failed write, 3 included
        await db.write_sync(not_this_way, bare=lambda c: c.execute("INSERT INTO t VALUES (3)"))
        assert rows(path) == [1, 2, 3]  # the connection is usable again
    finally:
        await db.dispose()


async def test_a_store_written_without_a_pause_starts_its_wal_again(tmp_path: Path):
    """Its checkpoints run beside its writes; one of each pair runs with writes held,
    so the WAL is wholly copied at times and the next write starts it again, instead of
    growing without end (it did: 85 KB per recorded 10-node run)."""
    path = tmp_path / "busy.db"
    store = await Store.open(f"sqlite:///{path}", blob_dir=tmp_path / "blobs")
    try:
        for _ in range(600):  # 1,200 commits, one after another
            run = await store.create_run(trigger={"text": "x" * 2_000})
            await store.finish_run(run.id, "completed", usage={"tokens": 1})
        with sqlite3.connect(path, timeout=0) as connection:
            _, frames, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        await store.close()
    # Without a restart the WAL would hold every page written: over 2,400 frames.
    assert frames < 1_200, frames
