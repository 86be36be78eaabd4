"""The Store: flows with versions, runs, their events and checkpoints, blobs, retention.

    store = await Store.open()                       # NODELOOM_DATABASE_URL or the default
    run = await store.create_run(document=graph, trigger={"message": "hi"})
    await store.record_events(run.id, events)        # a batch, in seq order
    await store.record_node(run.id, "n1", status="completed", outputs={"output": 1})
    await store.write_batch(run.id, events=events, nodes=[...])   # both, one transaction
    await store.finish_run(run.id, "completed")
    await store.close()

Every method is a coroutine and one transaction. Values larger than the blob threshold
are written once to the blob directory and referenced (see `nodeloom.store.packing`);
reads resolve them unless called with `resolve=False`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.paths import data_dir
from nodeloom.store import migrator
from nodeloom.store.binary import BinaryBlobs
from nodeloom.store.blobs import DIGEST, BlobDir
from nodeloom.store.committer import CommitListener
from nodeloom.store.control import Control
from nodeloom.store.database import Database
from nodeloom.store.flows import Flows
from nodeloom.store.outbox import Outbox
from nodeloom.store.packing import DEFAULT_THRESHOLD, Packer
from nodeloom.store.runs import Runs
from nodeloom.store.schema import Blob, BlobRef
from nodeloom.store.timeline import Timeline
from nodeloom.store.timers import Timers
from nodeloom.store.url import database_url, safe_url
from nodeloom.store.workers import Workers


class Store(Flows, Runs, Control, Timeline, Workers, Timers, Outbox):
    """An open run store. Create it with `await Store.open(...)`; `close()` it (or use
    `async with`).

    flows (nodeloom.store.flows)       save_flow, get_flow, list_flows, list_versions,
                                       delete_flow
    commits (nodeloom.store.committer) on_commit: every run's records are group-committed
    runs (nodeloom.store.runs)         create_run, update_run, finish_run, heartbeat,
                                       get_run, list_runs, run_document,
                                       find_interrupted, prune
    control (nodeloom.store.control)   claim_run, request_cancel, cancel_requested,
                                       cancels_requested
    timeline (nodeloom.store.timeline) write_batch, record_events, record_node,
                                       last_seq, events, node_executions, load_blob,
                                       open_blob
    workers (nodeloom.store.workers)   beat_worker, stop_worker, list_workers,
                                       forget_workers, ping
    timers (nodeloom.store.timers)     sync_schedules, list_schedules, get_schedule,
                                       pause_schedule, claim_tick, set_wakes, wakes_of,
                                       next_wake,
                                       lease_wakes
    outbox (nodeloom.store.outbox)     add_pending_job, take_pending_job, pending_jobs
    """

    @classmethod
    async def open(
        cls,
        url: str | URL | None = None,
        *,
        blob_dir: str | Path | None = None,
        blob_threshold: int = DEFAULT_THRESHOLD,
        pragmas: Mapping[str, str | int] | None = None,
        lock_timeout: float = 60.0,
    ) -> Store:
        """Open (creating it if needed) the database and migrate it to the newest schema.

        `url`: see `nodeloom.store.url.database_url` (default: NODELOOM_DATABASE_URL, else
        `<data dir>/nodeloom.db`). `blob_dir`: where large values go (default
        `<data dir>/blobs`; this database's blobs are in a sub-folder named by its store
        id). `blob_threshold`: bytes of JSON above which one value becomes a blob.
        `pragmas`: extra SQLite PRAGMAs for every connection (e.g. `max_page_count` caps
        the file's size). `lock_timeout`: seconds a write may wait for another process.

        Raises StoreCorruptError, StoreNewerSchemaError (the database is left untouched)
        or StoreUnavailableError.
        """
        db = Database(database_url(url), pragmas=pragmas, lock_timeout=lock_timeout)
        try:
            await migrator.check(db)
            await migrator.upgrade(db)
            store_id = await migrator.store_id(db)
        except BaseException:
            await db.dispose()
            raise
        root = Path(blob_dir) if blob_dir is not None else data_dir() / "blobs"
        return cls(db, Packer(BlobDir(root / store_id), blob_threshold), store_id)

    async def close(self) -> None:
        """Write what is queued, then close every connection. The store cannot be used
        afterwards."""
        await self._committer.aclose()
        await self._db.dispose()

    def on_commit(self, listener: CommitListener) -> Callable[[], None]:
        """Call `listener(batch)` each time a group commit of run records has committed,
        before its writers are released: the one place where events become committed in
        this process. `batch` is a sequence of `Write`s (`run_id`, `events`: the event rows
        written, in seq order). A listener must be quick and must not raise (an error is
        printed and ignored). Returns a function that removes the listener."""
        self._committer.listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._committer.listeners.remove(listener)

        return remove

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def ping(self) -> None:
        """One cheap round trip (`SELECT 1`); raises the store's error if it fails."""

        async def work(conn: Any) -> None:
            await conn.execute(text("SELECT 1"))

        await self._db.read(work)

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return safe_url(self._db.url)

    @property
    def listen_url(self) -> str | None:
        """Postgres: the plain libpq URL (password included) for a connection of its own,
        e.g. one that LISTENs for run changes (see `nodeloom.store.access.NOTIFY_CHANNEL`);
        None on SQLite."""
        if self._db.is_sqlite:
            return None
        plain = self._db.url.set(drivername="postgresql")
        return plain.render_as_string(hide_password=False)

    @property
    def blob_dir(self) -> Path:
        """This store's blob folder."""
        return self._blobs.root

    @property
    def binaries(self) -> BinaryBlobs:
        """Binary content (uploads, downloads) kept in the blob folder by digest, as nodes
        see it (`Services.blobs`; nodeloom.store.binary)."""
        return BinaryBlobs(self._blobs)

    async def run_blob(self, run_id: str, sha256: str) -> tuple[Path, int, str] | None:
        """The file, size and media type of a blob that run `run_id` holds (a value of
        the run's referenced it), else None: a digest the run never held, malformed, or
        pruned."""
        if DIGEST.fullmatch(sha256 or "") is None:
            return None

        async def work(conn: AsyncConnection) -> tuple[int, str] | None:
            row = (
                await conn.execute(
                    select(Blob.size, Blob.mime)
                    .join(BlobRef, BlobRef.sha256 == Blob.sha256)
                    .where(BlobRef.run_id == run_id, Blob.sha256 == sha256)
                )
            ).first()
            return None if row is None else (row.size, row.mime)

        found = await self._db.read(work)
        if found is None:
            return None
        path = self._blobs.path(sha256)
        if not await asyncio.to_thread(path.is_file):
            return None
        return path, found[0], found[1]
