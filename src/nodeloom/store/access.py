"""What every part of the Store shares: the database, the packer, and small helpers
for packing values, linking blobs to runs, checking and reading runs, and reporting
missing rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Row, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.blobs import BlobInfo
from nodeloom.store.database import Database
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import UNIT, Layout, Packed, Packer, has_refs, loads
from nodeloom.store.records import RUN_STATES, RunRecord
from nodeloom.store.schema import Blob, BlobRef, Document, Flow, Run

RUN_JSON: Mapping[str, Layout] = {"trigger": UNIT, "usage": UNIT, "error": UNIT, "settings": UNIT}
RUN_FIELDS = frozenset(
    {
        *RUN_JSON,
        "status",
        "flow_id",
        "flow_version",
        "chat_id",
        "started_at",
        "finished_at",
        "duration_ms",
        "steps",
        "owner_pid",
        "owner_host",
        "heartbeat_at",
        "rerun_of",
        "rerun_from",
        "cancel_requested_at",
        "parent_run_id",
        "parent_node",
    }
)


# Postgres: every write of a run's events or status notifies this channel with the run's
# id, in the same transaction (so it is delivered once the write is visible). Servers
# that follow a run executed elsewhere wait for it (nodeloom.fleet.signals).
NOTIFY_CHANNEL = "nodeloom_runs"
CANCEL_CHANNEL = "nodeloom_cancels"  # a cancel was asked: its owner looks now
_NOTIFY = text("SELECT pg_notify(:channel, :run_id)")


def now() -> datetime:
    return datetime.now(UTC)


class Access:
    """The state and helpers under `Store`'s methods (see `nodeloom.store.repository`)."""

    def __init__(self, db: Database, packer: Packer, store_id: str) -> None:
        self._db = db
        self._packer = packer
        self._blobs = packer.blobs
        self.store_id = store_id
        self._statements: dict[Any, Any] = {}  # statements built once per shape

    def _notify_sync(self, conn: Connection, run_id: str) -> None:
        """Postgres: tell listeners the run changed (delivered at commit)."""
        if not self._db.is_sqlite:
            conn.execute(_NOTIFY, {"channel": NOTIFY_CHANNEL, "run_id": run_id})

    async def _notify(
        self, conn: AsyncConnection, run_id: str, channel: str = NOTIFY_CHANNEL
    ) -> None:
        if not self._db.is_sqlite:
            await conn.execute(_NOTIFY, {"channel": channel, "run_id": run_id})

    def _insert(self, model: Any) -> Any:
        return (pg_insert if not self._db.is_sqlite else sqlite_insert)(model.__table__)

    async def _write_for_run(self, run_id: str, work: Callable[[Connection], None]) -> None:
        """`Database.write_sync`, a missing run (a foreign key) reported as NotFoundError."""
        try:
            await self._db.write_sync(work)
        except IntegrityError as exc:
            if "foreign key" in str(exc).lower():
                raise no_run(run_id) from None
            raise

    async def _pack(self, value: Any, layout: Layout) -> Packed:
        if value is None:
            return Packed(None)
        text = self._packer.quick(value, layout)
        if text is not None:
            return Packed(text)
        return await asyncio.to_thread(self._packer.pack, value, layout)

    async def _pack_columns(
        self, rows: Iterable[tuple[dict[str, Any], Mapping[str, Layout]]]
    ) -> list[Packed]:
        """Replace, in place, the value of each JSON column a row has (`{column: layout}`)
        by its text. Small values are encoded here; the few that may need a blob all go
        to one thread. Returns the results that reference blobs (for `_link`)."""
        quick = self._packer.quick
        slow: list[tuple[dict[str, Any], str, Layout]] = []
        for row, columns in rows:
            for column, layout in columns.items():
                value = row.get(column)
                if value is None:
                    continue
                text = quick(value, layout)
                if text is None:
                    slow.append((row, column, layout))
                else:
                    row[column] = text
        if not slow:
            return []
        return await asyncio.to_thread(self._pack_slow, slow)

    def _pack_slow(self, slow: list[tuple[dict[str, Any], str, Layout]]) -> list[Packed]:
        packed = []
        for row, column, layout in slow:
            result = self._packer.pack(row[column], layout)
            row[column] = result.text
            if result.blobs:
                packed.append(result)
        return packed

    async def _unpack(self, text: str | None, layout: Layout, resolve: bool) -> Any:
        if text is None:
            return None
        if resolve and has_refs(text):
            return await asyncio.to_thread(self._packer.unpack, text, layout)
        return self._load(text)

    def _load(self, text: str) -> Any:
        return loads(text)

    async def _link(self, conn: AsyncConnection, run_id: str, packed: Iterable[Packed]) -> None:
        """Record the blobs a row references (once each), so prune knows they are used."""
        for statement, rows in self._links(run_id, packed):
            await conn.execute(statement, rows)

    def _links(self, run_id: str, packed: Iterable[Packed]) -> list[tuple[Any, list[Any]]]:
        """The statements (with their rows) of `_link`, for a synchronous transaction."""
        blobs: dict[str, BlobInfo] = {}
        for item in packed:
            blobs.update((info.sha256, info) for info in item.blobs)
        if not blobs:
            return []
        at = now()
        return [
            (
                self._insert(Blob).on_conflict_do_nothing(),
                [
                    {"sha256": sha, "size": info.size, "mime": info.mime, "created_at": at}
                    for sha, info in blobs.items()
                ],
            ),
            (
                self._insert(BlobRef).on_conflict_do_nothing(),
                [{"run_id": run_id, "sha256": sha} for sha in blobs],
            ),
        ]

    async def _store_document(
        self, conn: AsyncConnection, digest: str, body: str, at: datetime
    ) -> None:
        await conn.execute(
            self._insert(Document)
            .values(hash=digest, body=body, size=len(body.encode()), created_at=at)
            .on_conflict_do_nothing()
        )

    async def _flow(self, conn: AsyncConnection, flow_id: str, include_deleted: bool) -> Row[Any]:
        flow = (await conn.execute(select(Flow).where(Flow.id == flow_id))).first()
        if flow is None or (flow.deleted_at is not None and not include_deleted):
            raise NotFoundError(
                f"no flow with id {flow_id!r}" + (" (it was deleted)" if flow else "")
            )
        return flow

    async def _require_run(self, conn: AsyncConnection, run_id: str) -> None:
        if await conn.scalar(select(Run.id).where(Run.id == run_id)) is None:
            raise no_run(run_id)

    async def _run_record(self, run: Row[Any], resolve: bool) -> RunRecord:
        """The record of a runs row (every column of it: the record's fields are the
        columns, the JSON ones decoded)."""
        values = dict(run._mapping)
        for column, layout in RUN_JSON.items():
            values[column] = await self._unpack(values[column], layout, resolve)
        return RunRecord(**values)


def run_changes(fields: Mapping[str, Any], valid: frozenset[str], caller: str) -> dict[str, Any]:
    """A copy of `fields` for the runs row, checked: ValueError for an unknown field (the
    valid ones are listed) or status. JSON fields still hold values (see RUN_JSON)."""
    unknown = sorted(set(fields) - valid)
    if unknown:
        raise ValueError(
            f"{caller}: unknown field(s) {', '.join(unknown)}; valid: {', '.join(sorted(valid))}"
        )
    if "status" in fields:
        check_choice(fields["status"], RUN_STATES, "status")
    return dict(fields)


def check_choice(value: Any, valid: tuple[str, ...], what: str) -> None:
    if value not in valid:
        raise ValueError(f"{what} {value!r} is not one of: {', '.join(valid)}")


def no_run(run_id: str) -> NotFoundError:
    return NotFoundError(f"no run with id {run_id!r}")
