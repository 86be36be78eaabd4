"""What every part of the Store shares: the database, the packer, and small helpers
for packing values, linking blobs to runs, checking and reading runs, and reporting
missing rows."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Integer, Row, bindparam, case, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.blobs import BlobInfo
from nodeloom.store.committer import NOTIFY_CHANNEL, Committer, Phase, Write
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
        self._committer = Committer(db)  # group commit of every run's records
        self._documents: set[str] = set()  # hashes of documents this store has written
        # (flow id, version) -> its document's hash: a saved version never changes
        self._version_hashes: dict[tuple[str, int], str] = {}

    async def _notify(
        self, conn: AsyncConnection, run_id: str, channel: str = NOTIFY_CHANNEL
    ) -> None:
        if not self._db.is_sqlite:
            await conn.execute(_NOTIFY, {"channel": channel, "run_id": run_id})

    def _insert(self, model: Any) -> Any:
        return (pg_insert if not self._db.is_sqlite else sqlite_insert)(model.__table__)

    async def _commit(self, write: Write, run_id: str) -> Write:
        """Hand `write` to the store's group commit and wait until it is committed. A
        missing run (the existence check, or a foreign key) is reported as NotFoundError."""
        write.missing = write.missing or (lambda: no_run(run_id))
        write.explain = write.explain or functools.partial(_foreign_key, run_id)
        return await self._committer.submit(write)

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
        for _, statement, rows in self._links(run_id, packed):
            await conn.execute(statement, rows)

    def _links(self, run_id: str, packed: Iterable[Packed]) -> list[Step]:
        """The statements (with their rows) of `_link`, as steps of a group-commit write."""
        blobs: dict[str, BlobInfo] = {}
        for item in packed:
            blobs.update((info.sha256, info) for info in item.blobs)
        if not blobs:
            return []
        at = now()
        return [
            (
                Phase.BLOB,
                self._insert_ignore(Blob),
                [
                    {"sha256": sha, "size": info.size, "mime": info.mime, "created_at": at}
                    for sha, info in blobs.items()
                ],
            ),
            (
                Phase.BLOB_REF,
                self._insert_ignore(BlobRef),
                [{"run_id": run_id, "sha256": sha} for sha in blobs],
            ),
        ]

    def _run_update(self, columns: frozenset[str], follow_seq: bool) -> Any:
        """UPDATE runs SET each of `columns` = :new_<column> (and, if `follow_seq`,
        last_seq = the larger of it and :top_seq) WHERE id = :run_key; built once per
        shape, so that a batch pays for neither building nor a cache key."""
        key = ("run_update", columns, follow_seq)
        statement = self._statements.get(key)
        if statement is None:
            table = Run.__table__
            values = self._run_values(columns, follow_seq)
            statement = update(table).where(table.c.id == bindparam("run_key")).values(values)
            self._statements[key] = statement
        return statement

    def _run_values(self, columns: frozenset[str], follow_seq: bool) -> dict[str, Any]:
        table = Run.__table__
        values: dict[str, Any] = {
            column: bindparam(f"new_{column}", type_=table.c[column].type) for column in columns
        }
        if follow_seq:
            top = bindparam("top_seq", type_=Integer())
            values["last_seq"] = case((table.c.last_seq < top, top), else_=table.c.last_seq)
        return values

    def _plain_insert(self, model: Any) -> Any:
        """INSERT into `model`'s table, for executemany (built once)."""
        key = ("insert", model.__tablename__)
        statement = self._statements.get(key)
        if statement is None:
            statement = self._insert(model)
            self._statements[key] = statement
        return statement

    def _insert_ignore(self, model: Any) -> Any:
        """INSERT ... ON CONFLICT DO NOTHING into `model`'s table (built once)."""
        key = ("insert_ignore", model.__tablename__)
        statement = self._statements.get(key)
        if statement is None:
            statement = self._insert(model).on_conflict_do_nothing()
            self._statements[key] = statement
        return statement

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


def _foreign_key(run_id: str, exc: BaseException) -> BaseException:
    """A foreign key that failed on a write of run `run_id`: the run does not exist."""
    if isinstance(exc, IntegrityError) and "foreign key" in str(exc).lower():
        return no_run(run_id)
    return exc


Step = tuple[Phase, Any, list[dict[str, Any]]]


def no_run(run_id: str) -> NotFoundError:
    return NotFoundError(f"no run with id {run_id!r}")
