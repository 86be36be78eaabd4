"""The Store's record of what happened in a run: events, node checkpoints, blobs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.plugins.contract import Event
from nodeloom.store.access import RUN_FIELDS, no_run, now, run_changes
from nodeloom.store.blobs import CHUNK
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import EVENT_DATA, JSON_MIME, PORTS, UNIT, blob_sha
from nodeloom.store.recording import Recording
from nodeloom.store.records import NodeExecution, StoredEvent
from nodeloom.store.schema import Event as EventRow
from nodeloom.store.schema import NodeExecution as NodeRow
from nodeloom.store.schema import Run
from nodeloom.values import BinaryRef


class _Unset:
    """A field `record_node` was not given (None means: store null)."""

    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()
BATCH_RUN_FIELDS = RUN_FIELDS | {"last_seq"}


class Timeline(Recording):
    """What happened in a run: its events, its node checkpoints, its blobs."""

    async def write_batch(
        self,
        run_id: str,
        *,
        events: Iterable[Event | Mapping[str, Any]] = (),
        nodes: Iterable[Mapping[str, Any]] = (),
        run: Mapping[str, Any] | None = None,
    ) -> None:
        """Write what a run did since the last batch, in one transaction (the engine's
        group-commit checkpoint writer):

        - `events`: appended as `record_events` does (an already stored seq is ignored,
          so a batch may be sent again);
        - `nodes`: checkpoint changes, dicts with `node_id`, `execution` (default 1),
          `status` and any of node_name, node_type, inputs, outputs, error, attempts,
          usage, started_at, finished_at, side_effects, input_hash, state_delta,
          activation, parameters. As in
          `record_node` only the keys given change; the changes to one (node_id,
          execution) are merged in order first (later keys win), so `started` then
          `completed` is one row write;
        - `run`: fields of the run, as `update_run` takes them, plus `last_seq`.

        The run's `heartbeat_at` becomes now (unless `run` gives it) and its `last_seq`
        the highest of the stored one (or the one `run` gives) and the batch's seqs.
        Raises NotFoundError for an unknown run, ValueError for an unknown field, status
        or side effect (the valid ones are listed); either way no row is written.
        """
        changes = run_changes(run or {}, BATCH_RUN_FIELDS, "write_batch")
        if "last_seq" in changes and not isinstance(changes["last_seq"], int):
            raise ValueError(
                f"write_batch: last_seq must be an integer; got {changes['last_seq']!r}"
            )
        changes.setdefault("heartbeat_at", now())
        await self._write(run_id, events, nodes, changes)

    async def record_events(self, run_id: str, events: Iterable[Event | Mapping[str, Any]]) -> int:
        """Append a batch of events (`Event`s or their `to_json()` dicts) in one
        transaction. An event whose seq is already stored is ignored, so a batch may be
        sent again. Returns how many were given. Raises NotFoundError for an unknown run."""
        return await self._write(run_id, events, (), {})

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
        input_hash: str | None = _UNSET,
        state_delta: Any = _UNSET,
        activation: str | None = _UNSET,
        parameters: Mapping[str, Any] | None = _UNSET,
    ) -> None:
        """Write a checkpoint: insert or update the row (run_id, node_id, execution).
        Only the fields given change, so `started` with inputs then `completed` with
        outputs make one row. `started_at` defaults to now on insert; `finished_at` to
        now when the status is completed, failed or skipped. (`write_batch` writes many,
        with events, in one transaction.)"""
        given = {
            "node_name": node_name,
            "node_type": node_type,
            "inputs": inputs,
            "outputs": outputs,
            "error": error,
            "attempts": attempts,
            "usage": usage,
            "started_at": started_at,
            "finished_at": finished_at,
            "side_effects": side_effects,
            "input_hash": input_hash,
            "state_delta": state_delta,
            "activation": activation,
            "parameters": parameters,
        }
        change = {"node_id": node_id, "execution": execution, "status": status}
        change.update((key, value) for key, value in given.items() if value is not _UNSET)
        await self._write(run_id, (), (change,), None)

    async def last_seq(self, run_id: str) -> int:
        """The highest event seq stored for the run (0 before its first event): where
        an engine resuming it continues numbering. Raises NotFoundError."""
        query = select(Run.last_seq).where(Run.id == run_id)

        async def work(conn: AsyncConnection) -> int:
            row = (await conn.execute(query)).first()
            if row is None:
                raise no_run(run_id)
            return int(row.last_seq)

        return await self._db.read(work)

    async def _write(
        self,
        run_id: str,
        events: Iterable[Event | Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        run: dict[str, Any] | None,
    ) -> int:
        """The one write path of events, checkpoints and run fields (see
        `Recording._record`); returns the number of events given."""
        write = await self._record(run_id, events, nodes, run)
        if write is None:
            return 0
        await self._commit(write, run_id)
        return len(write.events)

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
                    row.input_hash,
                    await self._unpack(row.state_delta, UNIT, resolve),
                    row.activation,
                    await self._unpack(row.parameters, UNIT, resolve),
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


def _sha(ref: str | Mapping[str, Any] | BinaryRef) -> str:
    if isinstance(ref, BinaryRef):
        ref = ref.to_json()
    if isinstance(ref, str):
        ref = {"$ref": ref, "mime": JSON_MIME, "size": 0}
    sha = blob_sha(dict(ref))
    if sha is None:
        raise NotFoundError(f"{ref!r} is not a store blob reference ('blob:<sha256>')")
    return sha
