"""Housekeeping: finding runs whose process died, and pruning old runs and blobs."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.blobs import BlobDir
from nodeloom.store.database import Database
from nodeloom.store.packing import dumps
from nodeloom.store.records import FINISHED_STATES, PruneReport
from nodeloom.store.schema import Blob, BlobRef, Document, Event, FlowVersion, NodeExecution, Run

BATCH = 200  # runs deleted per transaction: other writers wait at most one batch
BLOB_GRACE = timedelta(minutes=10)  # a blob this fresh may be about to be referenced


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


async def mark_interrupted(db: Database, stale_after: timedelta, at: datetime) -> list[str]:
    """Mark interrupted the running runs whose owner is gone; returns their ids."""
    host = socket.gethostname()
    stale = at - stale_after

    async def candidates(conn: AsyncConnection) -> list[Any]:
        rows = await conn.execute(
            select(Run.id, Run.owner_pid, Run.owner_host, Run.heartbeat_at, Run.created_at).where(
                Run.status == "running"
            )
        )
        return list(rows.all())

    gone: list[tuple[str, Any, dict[str, Any]]] = []
    for run_id, pid, owner_host, heartbeat, created in await db.read(candidates):
        last = heartbeat or created
        if owner_host == host and pid is not None and not pid_alive(pid):
            why = f"its process (pid {pid} on {host}) is gone"
        elif last < stale:
            why = f"no heartbeat since {last.isoformat()} (owner pid {pid} on {owner_host})"
        else:
            continue
        error = {
            "code": "interrupted",
            "message": f"the run stopped without finishing: {why}. Its checkpoints are "
            "kept; run it again to continue",
        }
        gone.append((run_id, heartbeat, error))
    if not gone:
        return []

    async def work(conn: AsyncConnection) -> list[str]:
        marked = []
        for run_id, heartbeat, error in gone:
            query = update(Run).where(Run.id == run_id, Run.status == "running")
            # A heartbeat that arrived since we looked means the owner lives.
            query = query.where(
                Run.heartbeat_at.is_(None) if heartbeat is None else Run.heartbeat_at == heartbeat
            )
            result = await conn.execute(
                query.values(status="interrupted", finished_at=at, error=dumps(error))
            )
            if result.rowcount:
                marked.append(run_id)
        return marked

    return await db.write(work)


async def prune(db: Database, blobs: BlobDir, cutoff: datetime) -> PruneReport:
    """Delete finished runs that ended before `cutoff`, then unused documents and blobs."""

    async def old_runs(conn: AsyncConnection) -> list[str]:
        ended = func.coalesce(Run.finished_at, Run.created_at)
        rows = await conn.scalars(
            select(Run.id).where(Run.status.in_(FINISHED_STATES), ended < cutoff)
        )
        return list(rows)

    counts = {"runs": 0, "events": 0, "node_executions": 0}
    for chunk in _chunks(await db.read(old_runs), BATCH):

        async def work(conn: AsyncConnection, ids: Sequence[str] = chunk) -> dict[str, int]:
            deleted = {}
            for key, table in (
                ("events", Event),
                ("node_executions", NodeExecution),
                ("blob_refs", BlobRef),
                ("runs", Run),
            ):
                column = Run.id if table is Run else table.run_id
                result = await conn.execute(delete(table).where(column.in_(ids)))
                deleted[key] = result.rowcount
            return deleted

        for key, value in (await db.write(work)).items():
            if key in counts:
                counts[key] += value

    async def unused(conn: AsyncConnection) -> tuple[int, set[str]]:
        documents = await conn.execute(
            delete(Document).where(
                ~select(Run.id).where(Run.document_hash == Document.hash).exists(),
                ~select(FlowVersion.flow_id)
                .where(FlowVersion.document_hash == Document.hash)
                .exists(),
            )
        )
        await conn.execute(
            delete(Blob).where(
                ~select(BlobRef.run_id).where(BlobRef.sha256 == Blob.sha256).exists()
            )
        )
        kept = set(await conn.scalars(select(Blob.sha256)))
        return documents.rowcount, kept

    documents, kept = await db.write(unused)
    removed, freed = await asyncio.to_thread(_sweep_blobs, blobs, kept)
    return PruneReport(
        runs=counts["runs"],
        events=counts["events"],
        node_executions=counts["node_executions"],
        documents=documents,
        blobs=removed,
        bytes_freed=freed,
    )


def _sweep_blobs(blobs: BlobDir, kept: set[str]) -> tuple[int, int]:
    """Delete blob files the database no longer lists (unless written very recently)."""
    before = time.time() - BLOB_GRACE.total_seconds()
    removed = freed = 0
    if not blobs.root.is_dir():
        return 0, 0
    for folder in blobs.root.iterdir():
        if folder == blobs.tmp or not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.name in kept:
                continue
            size = blobs.delete(path.name, unless_newer_than=before)
            if size:
                removed += 1
                freed += size
    freed += blobs.sweep_partial(before)
    return removed, freed


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
