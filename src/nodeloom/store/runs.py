"""The Store's runs: update, finish, heartbeat, read and list; interrupted runs and
pruning (see `nodeloom.store.retention`). Creating them: `nodeloom.store.creation`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Float, Row, bindparam, cast, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.plugins.contract import Event
from nodeloom.store import retention
from nodeloom.store.access import RUN_FIELDS, RUN_JSON, check_choice, no_run, now, run_changes
from nodeloom.store.committer import Phase, Write
from nodeloom.store.creation import Creation, NewRun
from nodeloom.store.packing import UNIT
from nodeloom.store.records import RUN_STATES, PruneReport, RunRecord
from nodeloom.store.schema import Document, Run


class Runs(Creation):
    """Runs: their status, owner and outcome; recovery and retention."""

    async def update_run(self, run_id: str, **fields: Any) -> None:
        """Set fields of a run: status, started_at, finished_at, duration_ms, steps,
        trigger, usage, error, settings, chat_id, flow_id, flow_version, owner_pid,
        owner_host, heartbeat_at, rerun_of, rerun_from, cancel_requested_at. Raises
        NotFoundError, or ValueError for an unknown field (the valid ones are listed)."""
        values = run_changes(fields, RUN_FIELDS, "update_run")
        if not values:
            return
        packed = await self._pack_columns([(values, RUN_JSON)])
        params = {f"new_{column}": value for column, value in values.items()}
        params["run_key"] = run_id
        steps = self._links(run_id, packed)
        steps.append((Phase.RUN_UPDATE, self._run_update(frozenset(values), False), [params]))
        await self._commit(Write(run_id, steps, must_exist=True), run_id)

    async def finish_run(
        self,
        run_id: str,
        status: str,
        *,
        error: Mapping[str, Any] | None = None,
        usage: Mapping[str, Any] | None = None,
        steps: int | None = None,
        duration_ms: float | None = None,
        finished_at: datetime | None = None,
        events: Iterable[Event | Mapping[str, Any]] = (),
        nodes: Iterable[Mapping[str, Any]] = (),
    ) -> RunRecord:
        """End a run: completed, failed, cancelled or interrupted. `duration_ms` defaults
        to the time since the run started. `events` and `nodes`: the run's last events and
        checkpoint changes, as `write_batch` takes them, written in the same transaction.
        Returns the run, read back in that transaction (`end_run` does not read it)."""
        write = await self._end(
            run_id, status, error, usage, steps, duration_ms, finished_at, events, nodes, True
        )
        assert write.row is not None
        return await self._run_record(write.row, True)

    async def end_run(
        self,
        run_id: str,
        status: str,
        *,
        error: Mapping[str, Any] | None = None,
        usage: Mapping[str, Any] | None = None,
        steps: int | None = None,
        duration_ms: float | None = None,
        finished_at: datetime | None = None,
        events: Iterable[Event | Mapping[str, Any]] = (),
        nodes: Iterable[Mapping[str, Any]] = (),
        created: NewRun | None = None,
    ) -> None:
        """`finish_run` without reading the run back (a RunService's hot path). `created`:
        the run, prepared (`prepare_run`) and not written yet, is created in the same
        transaction (a short run: created, recorded and ended in one)."""
        await self._end(
            run_id,
            status,
            error,
            usage,
            steps,
            duration_ms,
            finished_at,
            events,
            nodes,
            False,
            created,
        )

    async def _end(
        self,
        run_id: str,
        status: str,
        error: Mapping[str, Any] | None,
        usage: Mapping[str, Any] | None,
        steps: int | None,
        duration_ms: float | None,
        finished_at: datetime | None,
        events: Iterable[Event | Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        read_back: bool,
        created: NewRun | None = None,
    ) -> Write:
        check_choice(status, ("completed", "failed", "cancelled", "interrupted"), "status")
        at = finished_at or now()
        values: dict[str, Any] = {"status": status, "finished_at": at}
        packed = []
        for key, value in (("error", error), ("usage", usage)):
            if value is not None:
                result = await self._pack(dict(value), UNIT)
                values[key] = result.text
                packed.append(result)
        if steps is not None:
            values["steps"] = steps
        params = {f"new_{column}": value for column, value in values.items()}
        params["run_key"] = run_id
        if duration_ms is not None:
            params["new_duration_ms"] = duration_ms
        # Its last records, if any, and its end: one write, one UPDATE of the run.
        write = await self._record(run_id, events, nodes, None) or Write(run_id, [])
        top = max((row["seq"] for row in write.events), default=None)
        if write.steps:
            values["heartbeat_at"] = params["new_heartbeat_at"] = at
        if top is not None:
            params["top_seq"] = top
        write.steps += self._links(run_id, packed)
        write.must_exist, write.returns_run = True, read_back
        if created is not None:  # inserted as it ended: one change of its runs row
            created.row.update(values, duration_ms=_elapsed(created.record, at, duration_ms))
            return await self._create(created, write)
        statement = self._finish(frozenset(values), duration_ms is None, top is not None)
        write.steps.append((Phase.RUN_FINISH, statement, [params]))
        return await self._commit(write, run_id)

    def _finish(self, columns: frozenset[str], timed: bool, follow_seq: bool) -> Any:
        """The run update of `_run_update` (each of `columns`, and `last_seq` if
        `follow_seq`), and duration_ms = :new_duration_ms, or (`timed`) the milliseconds
        from its start (or creation) to :new_finished_at, computed by the database."""
        key = ("run_finish", columns, timed, follow_seq)
        statement = self._statements.get(key)
        if statement is None:
            table = Run.__table__
            values = self._run_values(columns, follow_seq)
            if timed:
                at = values["finished_at"]
                values["duration_ms"] = self._elapsed_ms(
                    func.coalesce(table.c.started_at, table.c.created_at), at
                )
            else:
                values["duration_ms"] = bindparam("new_duration_ms", type_=Float())
            statement = update(table).where(table.c.id == bindparam("run_key")).values(values)
            self._statements[key] = statement
        return statement

    def _elapsed_ms(self, start: Any, end: Any) -> Any:
        """Milliseconds from `start` to `end` (two UTC times), never negative, in SQL."""
        if self._db.is_sqlite:  # times are ISO text; julianday counts days
            elapsed = (func.julianday(end) - func.julianday(start)) * 86_400_000.0
            return func.max(elapsed, 0.0)
        elapsed = func.extract("epoch", end - start) * 1000.0
        return cast(func.greatest(elapsed, 0.0), Float())

    async def heartbeat(self, run_id: str, *more: str) -> None:
        """Tell that this process still runs these runs (refreshes `heartbeat_at`).
        Raises NotFoundError if a run does not exist."""
        ids = [run_id, *more]

        async def work(conn: AsyncConnection) -> None:
            result = await conn.execute(
                update(Run).where(Run.id.in_(ids)).values(heartbeat_at=now())
            )
            if result.rowcount != len(set(ids)):
                found = set(await conn.scalars(select(Run.id).where(Run.id.in_(ids))))
                raise no_run(", ".join(sorted(set(ids) - found)))

        await self._db.write(work)

    async def get_run(self, run_id: str, *, resolve: bool = True) -> RunRecord:
        """A run. Raises NotFoundError."""

        async def work(conn: AsyncConnection) -> Row[Any]:
            row = (await conn.execute(select(Run).where(Run.id == run_id))).first()
            if row is None:
                raise no_run(run_id)
            return row

        return await self._run_record(await self._db.read(work), resolve)

    async def list_runs(
        self,
        *,
        status: str | Iterable[str] | None = None,
        flow_id: str | None = None,
        chat_id: str | None = None,
        since: datetime | None = None,
        parent_run_id: str | None = None,
        limit: int | None = 100,
        offset: int = 0,
        resolve: bool = True,
    ) -> list[RunRecord]:
        """Runs, the newest first, filtered by status (one or several), flow, chat and
        creation time (`since`, inclusive), and the run that started them
        (`parent_run_id`: a run's children)."""
        query = select(Run).order_by(Run.created_at.desc(), Run.id.desc())
        if status is not None:
            states = [status] if isinstance(status, str) else list(status)
            for state in states:
                check_choice(state, RUN_STATES, "status")
            query = query.where(Run.status.in_(states))
        if flow_id is not None:
            query = query.where(Run.flow_id == flow_id)
        if chat_id is not None:
            query = query.where(Run.chat_id == chat_id)
        if since is not None:
            query = query.where(Run.created_at >= since)
        if parent_run_id is not None:
            query = query.where(Run.parent_run_id == parent_run_id)
        query = query.limit(limit).offset(offset)

        async def work(conn: AsyncConnection) -> list[Row[Any]]:
            return list((await conn.execute(query)).all())

        return [await self._run_record(row, resolve) for row in await self._db.read(work)]

    async def run_document(self, run_id: str) -> dict[str, Any] | None:
        """The graph document that ran (None if the run was created without one)."""

        async def work(conn: AsyncConnection) -> tuple[bool, str | None]:
            row = (
                await conn.execute(
                    select(Run.id, Document.body)
                    .outerjoin(Document, Document.hash == Run.document_hash)
                    .where(Run.id == run_id)
                )
            ).first()
            if row is None:
                raise no_run(run_id)
            return True, row.body

        _, body = await self._db.read(work)
        return None if body is None else self._load(body)

    async def find_interrupted(
        self, stale_after: timedelta = timedelta(minutes=2)
    ) -> list[RunRecord]:
        """Mark `interrupted` every `running` run whose owner is gone: on this host its
        process no longer exists, or (any host) its heartbeat is older than `stale_after`.
        Returns those runs. Paused runs are never touched: they wait for input, not for a
        process."""
        ids = await retention.mark_interrupted(self._db, stale_after, now())
        return [await self.get_run(run_id) for run_id in ids]

    async def prune(self, older_than: timedelta) -> PruneReport:
        """Delete finished runs (completed, failed, cancelled, interrupted) that ended
        more than `older_than` ago, with their events and checkpoints; then graph
        documents no run or flow version uses, and blob files nothing references (a blob
        written in the last few minutes is kept: a writer may be about to reference it)."""
        self._documents.clear()  # it may delete documents: write them again
        return await retention.prune(self._db, self._blobs, now() - older_than)


def _elapsed(run: RunRecord, at: datetime, duration_ms: float | None) -> float:
    """A run's duration in ms, as `_finish` has the database compute it: `duration_ms`
    if given, else from its start (or creation) to `at`, never negative."""
    if duration_ms is not None:
        return duration_ms
    start = run.started_at or run.created_at
    at, start = (t if t.tzinfo is not None else t.replace(tzinfo=UTC) for t in (at, start))
    return max((at - start).total_seconds() * 1000.0, 0.0)
