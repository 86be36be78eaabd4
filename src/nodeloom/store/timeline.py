"""The Store's record of what happened in a run: events, node checkpoints, blobs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.graph.values import BinaryRef
from nodeloom.plugins.contract import Event
from nodeloom.store.access import Access, check_choice, now
from nodeloom.store.blobs import CHUNK
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import EVENT_DATA, JSON_MIME, PORTS, UNIT, Packed, blob_sha, dumps
from nodeloom.store.records import NODE_STATES, SIDE_EFFECTS, NodeExecution, StoredEvent
from nodeloom.store.schema import Event as EventRow
from nodeloom.store.schema import NodeExecution as NodeRow


class _Unset:
    """A field `record_node` was not given (None means: store null)."""

    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()
_NODE_JSON = {"inputs": PORTS, "outputs": PORTS, "error": UNIT, "usage": UNIT}
_TERMINAL_NODE = ("completed", "failed", "skipped")


class Timeline(Access):
    """What happened in a run: its events, its node checkpoints, its blobs."""

    async def record_events(self, run_id: str, events: Iterable[Event | Mapping[str, Any]]) -> int:
        """Append a batch of events (`Event`s or their `to_json()` dicts) in one
        transaction. An event whose seq is already stored is ignored, so a batch may be
        sent again. Returns how many were given. Raises NotFoundError for an unknown run."""
        rows: list[dict[str, Any]] = []
        packed: list[Packed] = []
        for item in events:
            row = _event_row(run_id, item)
            result = await self._pack(row["data"], EVENT_DATA)
            row["data"] = result.text
            if result.blobs:
                packed.append(result)
            rows.append(row)
        if not rows:
            return 0

        async def work(conn: AsyncConnection) -> None:
            await self._link(conn, run_id, packed)
            await conn.execute(self._insert(EventRow).on_conflict_do_nothing(), rows)

        await self._write_for_run(run_id, work)
        return len(rows)

    async def record_node(
        self,
        run_id: str,
        node_id: str,
        execution: int = 1,
        *,
        status: str,
        node_name: str | None = _UNSET,
        node_type: str | None = _UNSET,
        inputs: Mapping[str, Any] | None = _UNSET,
        outputs: Mapping[str, Any] | None = _UNSET,
        error: Mapping[str, Any] | None = _UNSET,
        attempts: int = _UNSET,
        usage: Mapping[str, Any] | None = _UNSET,
        started_at: datetime = _UNSET,
        finished_at: datetime | None = _UNSET,
        side_effects: str | None = _UNSET,
    ) -> None:
        """Write a checkpoint: insert or update the row (run_id, node_id, execution).
        Only the fields given change, so `started` with inputs then `completed` with
        outputs make one row. `started_at` defaults to now on insert; `finished_at` to
        now when the status is completed, failed or skipped."""
        check_choice(status, NODE_STATES, "status")
        if side_effects is not _UNSET and side_effects is not None:
            check_choice(side_effects, SIDE_EFFECTS, "side_effects")
        values: dict[str, Any] = {"status": status}
        given = {
            "node_name": node_name,
            "node_type": node_type,
            "attempts": attempts,
            "started_at": started_at,
            "finished_at": finished_at,
            "side_effects": side_effects,
        }
        values.update({key: value for key, value in given.items() if value is not _UNSET})
        packed: list[Packed] = []
        for key, value in (("inputs", inputs), ("outputs", outputs), ("error", error)):
            if value is not _UNSET:
                result = await self._pack(value, _NODE_JSON[key])
                values[key] = result.text
                packed.append(result)
        if usage is not _UNSET:
            values["usage"] = None if usage is None else dumps(usage)
        if finished_at is _UNSET and status in _TERMINAL_NODE:
            values["finished_at"] = now()
        inserted = {"attempts": 1, **values, "run_id": run_id, "node_id": node_id}
        inserted["execution"] = execution
        inserted.setdefault("started_at", now())
        statement = self._upsert(frozenset(values), frozenset(inserted))

        async def work(conn: AsyncConnection) -> None:
            await self._link(conn, run_id, packed)
            await conn.execute(statement, inserted)

        await self._write_for_run(run_id, work)

    def _upsert(self, changed: frozenset[str], given: frozenset[str]) -> Any:
        """The checkpoint upsert that updates `changed` (built once per shape)."""
        key = ("node_upsert", changed, given)
        statement = self._statements.get(key)
        if statement is None:
            insert = self._insert(NodeRow)
            statement = insert.on_conflict_do_update(
                index_elements=["run_id", "node_id", "execution"],
                set_={column: insert.excluded[column] for column in sorted(changed)},
            )
            self._statements[key] = statement
        return statement

    async def events(
        self, run_id: str, from_seq: int = 0, limit: int | None = None, *, resolve: bool = True
    ) -> list[StoredEvent]:
        """A run's events with seq >= `from_seq`, in order. Raises NotFoundError."""
        query = (
            select(EventRow)
            .where(EventRow.run_id == run_id, EventRow.seq >= from_seq)
            .order_by(EventRow.seq)
            .limit(limit)
        )

        async def work(conn: AsyncConnection) -> list[Row[Any]]:
            rows = list((await conn.execute(query)).all())
            if not rows:
                await self._require_run(conn, run_id)
            return rows

        result = []
        for event in await self._db.read(work):
            result.append(
                StoredEvent(
                    run_id,
                    event.seq,
                    event.type,
                    event.node_id,
                    event.node_name,
                    event.node_type,
                    await self._unpack(event.data, EVENT_DATA, resolve) or {},
                    event.timestamp,
                )
            )
        return result

    async def node_executions(self, run_id: str, *, resolve: bool = True) -> list[NodeExecution]:
        """A run's checkpoints, in the order they started (the per-node timeline)."""
        query = (
            select(NodeRow)
            .where(NodeRow.run_id == run_id)
            .order_by(NodeRow.started_at, NodeRow.node_id, NodeRow.execution)
        )

        async def work(conn: AsyncConnection) -> list[Row[Any]]:
            rows = list((await conn.execute(query)).all())
            if not rows:
                await self._require_run(conn, run_id)
            return rows

        result = []
        for row in await self._db.read(work):
            result.append(
                NodeExecution(
                    run_id,
                    row.node_id,
                    row.execution,
                    row.node_name,
                    row.node_type,
                    row.status,
                    await self._unpack(row.inputs, PORTS, resolve),
                    await self._unpack(row.outputs, PORTS, resolve),
                    await self._unpack(row.error, UNIT, resolve),
                    row.attempts,
                    await self._unpack(row.usage, UNIT, False),
                    row.started_at,
                    row.finished_at,
                    row.side_effects,
                )
            )
        return result

    # -- blobs ----------------------------------------------------------------------------

    async def load_blob(self, ref: str | Mapping[str, Any] | BinaryRef) -> Any:
        """The value a blob reference stands for."""
        return await asyncio.to_thread(self._blobs.load, _sha(ref))

    async def open_blob(self, ref: str | Mapping[str, Any] | BinaryRef) -> AsyncIterator[bytes]:
        """The blob's JSON bytes in chunks, never all in memory (for streaming it out)."""
        file = await asyncio.to_thread(self._blobs.open, _sha(ref))
        try:
            while chunk := await asyncio.to_thread(file.read, CHUNK):
                yield chunk
        finally:
            file.close()


def _event_row(run_id: str, item: Event | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, Event):
        source: Mapping[str, Any] = item.to_json()
    else:
        source = item
    other = source.get("run_id")
    if other and other != run_id:
        raise ValueError(f"an event of run {other!r} was recorded for run {run_id!r}")
    event_type = source.get("event_type") or source.get("type")
    if not isinstance(source.get("seq"), int) or not isinstance(event_type, str):
        raise ValueError(f"an event needs an integer seq and an event_type; got {dict(source)!r}")
    return {
        "run_id": run_id,
        "seq": source["seq"],
        "type": event_type,
        "node_id": source.get("node_id"),
        "node_name": source.get("node_name"),
        "node_type": source.get("node_type"),
        "data": source.get("data") or None,
        "timestamp": float(source.get("timestamp") or 0.0),
    }


def _sha(ref: str | Mapping[str, Any] | BinaryRef) -> str:
    if isinstance(ref, BinaryRef):
        ref = ref.to_json()
    if isinstance(ref, str):
        ref = {"$ref": ref, "mime": JSON_MIME, "size": 0}
    sha = blob_sha(dict(ref))
    if sha is None:
        raise NotFoundError(f"{ref!r} is not a store blob reference ('blob:<sha256>')")
    return sha
