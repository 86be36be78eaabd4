"""SQLite-only behaviour: journal settings, several processes on one file, files the store
must refuse without touching them, and a full disk."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from nodeloom.plugins.contract import Event
from nodeloom.store import (
    RunStateError,
    Store,
    StoreCorruptError,
    StoreFullError,
    StoreNewerSchemaError,
    StoreUnavailableError,
)
from nodeloom.store.schema import VERSION_TABLE


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def naming(path: Path, rest: str) -> str:
    """A `match=` pattern: the message names the file, then says `rest`."""
    return re.escape(str(path)) + ".*" + rest


def companions(path: Path) -> list[Path]:
    return [p for p in (Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]


async def test_sqlite_runs_in_wal_mode_with_normal_sync_and_a_busy_timeout(tmp_path: Path):
    store = await Store.open(f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path)
    try:
        async with store._db.writer.connect() as conn:  # white box: the writer's settings
            values = [
                (await conn.execute(text(f"PRAGMA {name}"))).scalar()
                for name in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")
            ]
    finally:
        await store.close()
    assert values == ["wal", 1, 5000, 1]  # synchronous 1 = NORMAL


async def test_a_file_of_random_bytes_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    path.write_bytes(os.urandom(16_384))
    before = digest(path)
    with pytest.raises(
        StoreCorruptError, match=naming(path, r"not a SQLite database.*Move it away")
    ):
        await Store.open(f"sqlite:///{path}")
    assert digest(path) == before and companions(path) == []


async def test_a_damaged_sqlite_file_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8_192))
    before = digest(path)
    with pytest.raises(StoreCorruptError, match=naming(path, r"(damaged|not a SQLite)")) as caught:
        await Store.open(f"sqlite:///{path}")
    assert caught.value.code == "store_corrupt"
    assert digest(path) == before and companions(path) == []


async def test_a_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        connection.execute("INSERT INTO invoices (total) VALUES (9.5)")
    connection.close()
    before = digest(path)
    with pytest.raises(StoreCorruptError, match=naming(path, r"not a nodeloom database.*invoices")):
        await Store.open(f"sqlite:///{path}")
    assert digest(path) == before and companions(path) == []


async def test_a_newer_sqlite_file_is_refused_and_left_byte_for_byte_untouched(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    store = await Store.open(f"sqlite:///{path}", blob_dir=tmp_path)
    await store.create_run()
    await store.close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"UPDATE {VERSION_TABLE} SET version_num = '0042_from_the_future'")
    connection.close()
    before = digest(path)
    with pytest.raises(StoreNewerSchemaError, match=naming(path, r"0042_from_the_future")):
        await Store.open(f"sqlite:///{path}")
    assert digest(path) == before


async def test_an_unwritable_location_gives_store_unavailable(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreUnavailableError, match="cannot create"):
        await Store.open(f"sqlite:///{blocker / 'nodeloom.db'}")


async def test_a_writer_blocked_longer_than_lock_timeout_gets_store_unavailable(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    store = await Store.open(f"sqlite:///{path}", blob_dir=tmp_path, lock_timeout=0.5)
    try:
        run = await store.create_run()
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreUnavailableError, match=r"locked.*0\.5 s"):
                await store.record_node(run.id, "a", status="started")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await store.record_node(run.id, "a", status="started")
        assert len(await store.node_executions(run.id)) == 1
    finally:
        await store.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from nodeloom.plugins.contract import Event
    from nodeloom.store import Store

    async def main(url, blobs, name, runs):
        store = await Store.open(url, blob_dir=blobs)
        async def one(number):
            run = await store.create_run(run_id=f"{name}-{number}", trigger={"n": number})
            for node in range(10):
                await store.record_node(run.id, f"n{node}", status="started", inputs={"i": node})
                await store.record_events(run.id, [
                    Event("started", None, f"n{node}", "N", "set", run.id, 2 * node + 1),
                    Event("completed", {"outputs": {"o": node}}, f"n{node}", "N", "set",
                          run.id, 2 * node + 2),
                ])
                await store.record_node(run.id, f"n{node}", status="completed", outputs={"o": 1})
            await store.finish_run(run.id, "completed")
        await asyncio.gather(*(one(n) for n in range(runs)))
        await store.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
    """
)


@pytest.mark.slow
async def test_two_processes_writing_one_file_never_fail_with_database_is_locked(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"  # new: both processes also migrate it at once
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, str(tmp_path / "blobs"), name, "25"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    outputs = [process.communicate(timeout=120) for process in processes]
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
    store = await Store.open(url, blob_dir=tmp_path / "blobs")
    try:
        runs = await store.list_runs(status="completed", limit=None)
        assert len(runs) == 50
        for run in runs:
            assert len(await store.events(run.id)) == 20
            assert len(await store.node_executions(run.id)) == 10
    finally:
        await store.close()


async def test_a_full_database_gives_store_full_and_loses_no_stored_run(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    url = f"sqlite:///{path}"
    capped = await Store.open(url, blob_dir=tmp_path, pragmas={"max_page_count": 120})
    try:
        kept = await capped.create_run(trigger={"kept": True})
        await capped.record_events(
            kept.id, [Event("started", {"n": 1}, "a", "A", "set", kept.id, 1)]
        )
        await capped.finish_run(kept.id, "completed")
        filler = await capped.create_run()
        with pytest.raises(
            StoreFullError, match=naming(path, r"is full.*nothing stored before")
        ) as caught:
            for seq in range(1, 10_000):
                await capped.record_events(
                    filler.id,
                    [Event("progress", {"text": "y" * 3_000}, "a", "A", "set", filler.id, seq)],
                )
        assert caught.value.code == "store_full"
        assert (await capped.get_run(kept.id)).trigger == {"kept": True}
    finally:
        await capped.close()
    store = await Store.open(url, blob_dir=tmp_path)
    try:
        assert [e.data for e in await store.events(kept.id)] == [{"n": 1}]
        assert (await store.get_run(kept.id)).status == "completed"
        await store.record_node(filler.id, "a", status="completed", outputs={"output": 1})
    finally:
        await store.close()


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs: a real ENOSPC for the database and the blob files (needs root)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(
            "cannot mount a tmpfs here (not root?); the max_page_count test covers a full "
            f"database: {done.stderr.decode().strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


async def test_a_full_disk_gives_store_full_and_loses_no_stored_run(tiny_disk: Path):
    url = f"sqlite:///{tiny_disk / 'nodeloom.db'}"
    store = await Store.open(url, blob_dir=tiny_disk / "blobs", blob_threshold=64 * 1024)
    try:
        stored = []
        with pytest.raises(StoreFullError, match="full") as caught:
            for number in range(100):
                run = await store.create_run()
                # 114 KB: a blob each. Which part fills first (the blob directory, here)
                # depends on the last few KB of the disk: the WAL grows with every commit,
                # by a page more per index. 0004's index on runs.parent_run_id moved it
                # from 20_000 (120 KB); other sizes fail even before 0004 (21_000, 24_000).
                value = f"{number:06d}" * 19_000
                await store.record_node(run.id, "a", status="completed", outputs={"o": value})
                await store.finish_run(run.id, "completed")
                stored.append((run.id, value))
        assert caught.value.code == "store_full" and "blob directory" in str(caught.value)
        assert len(stored) >= 3
        with pytest.raises(StoreFullError, match=r"SQLite database .* is full"):
            filler = await store.create_run()
            for seq in range(1, 10_000):  # small rows, no blobs: the database file fills
                data = {"text": f"{seq:08d}" * 600}
                await store.record_events(
                    filler.id, [Event("progress", data, run_id=filler.id, seq=seq)]
                )
        for run_id, value in stored:
            (node,) = await store.node_executions(run_id)
            assert node.outputs == {"o": value}
    finally:
        await store.close()


async def test_many_small_writes_interleave_with_reads(tmp_path: Path):
    store = await Store.open(f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path)
    try:
        run = await store.create_run()

        async def write() -> None:
            for seq in range(1, 201):
                await store.record_events(
                    run.id, [Event("progress", {"i": seq}, run_id=run.id, seq=seq)]
                )

        async def read() -> None:
            for _ in range(50):
                seen = [e.seq for e in await store.events(run.id)]
                assert seen == list(range(1, len(seen) + 1))
                await asyncio.sleep(0)

        await asyncio.gather(write(), read(), read())
        assert len(await store.events(run.id)) == 200
    finally:
        await store.close()


async def test_two_stores_on_one_file_claiming_a_run_at_once_let_exactly_one_win(
    tmp_path: Path,
):
    url = f"sqlite:///{tmp_path / 'nodeloom.db'}"
    left = await Store.open(url, blob_dir=tmp_path)
    right = await Store.open(url, blob_dir=tmp_path)
    try:
        for _ in range(10):
            run = await left.create_run(status="paused")
            results = await asyncio.gather(
                left.claim_run(run.id, owner_pid=1),
                right.claim_run(run.id, owner_pid=2),
                return_exceptions=True,
            )
            won = [result for result in results if not isinstance(result, BaseException)]
            (lost,) = [result for result in results if isinstance(result, BaseException)]
            assert len(won) == 1 and isinstance(lost, RunStateError)
            assert (await right.get_run(run.id)).owner_pid == won[0].owner_pid
    finally:
        await left.close()
        await right.close()


async def test_an_in_memory_store_writes_batches_too(tmp_path: Path):
    store = await Store.open("sqlite://", blob_dir=tmp_path)
    try:
        run = await store.create_run()
        await store.write_batch(
            run.id,
            events=[Event("started", None, "a", "A", "set", run.id, 1)],
            nodes=[
                {"node_id": "a", "status": "started", "inputs": {"input": 1}},
                {"node_id": "a", "status": "completed", "outputs": {"output": 2}},
            ],
        )
        (node,) = await store.node_executions(run.id)
        assert (node.inputs, node.outputs) == ({"input": 1}, {"output": 2})
        assert await store.last_seq(run.id) == 1
    finally:
        await store.close()


async def test_a_batch_waits_for_another_writer_and_then_is_written(tmp_path: Path):
    path = tmp_path / "nodeloom.db"
    store = await Store.open(f"sqlite:///{path}", blob_dir=tmp_path)
    try:
        run = await store.create_run()
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        batch = asyncio.create_task(
            store.write_batch(run.id, events=[Event("started", None, run_id=run.id, seq=1)])
        )
        await asyncio.sleep(0.2)
        assert not batch.done()
        holder.execute("ROLLBACK")
        holder.close()
        await batch
        assert await store.last_seq(run.id) == 1
    finally:
        await store.close()
