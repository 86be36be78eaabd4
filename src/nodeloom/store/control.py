"""The Store's control of runs between processes: `claim_run` takes a paused or
interrupted run over to resume it here; `request_cancel` asks a run's owner to stop it,
and the owner polls `cancel_requested` (or `cancels_requested`, for many runs).

Each change is one conditional UPDATE (`... WHERE id = ? AND status IN (...)`): when two
processes try at once, the database lets exactly one of them through.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Row, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.access import (
    CANCEL_CHANNEL,
    NOTIFY_CHANNEL,
    Access,
    check_choice,
    no_run,
    now,
)
from nodeloom.store.errors import RunStateError
from nodeloom.store.records import RUN_STATES, RunRecord
from nodeloom.store.schema import Run

RESUMABLE = ("paused", "interrupted")
_HOST = socket.gethostname()
# claim_run on Postgres (see `_claim_in_one_statement`): a CTE's pg_notify runs only if
# the main query reads it, hence the count.
_CLAIM = text(
    f"""
    WITH claimed AS (
        UPDATE runs SET status = 'running', owner_pid = :pid, owner_host = :host,
            heartbeat_at = :at, started_at = coalesce(started_at, :at),
            finished_at = NULL, error = NULL, duration_ms = NULL
        WHERE id = :run_id AND status = ANY(:required)
        RETURNING *
    ), told AS (SELECT pg_notify('{NOTIFY_CHANNEL}', id) FROM claimed)
    SELECT claimed.* FROM claimed WHERE (SELECT count(*) FROM told) >= 0
    """
).columns(*Run.__table__.columns)
CANCELLABLE = ("running", "paused")


class Control(Access):
    """Taking runs over (resume) and asking them to stop (cancel)."""

    async def claim_run(
        self,
        run_id: str,
        *,
        states: Iterable[str] = RESUMABLE,
        owner_pid: int | None = None,
        owner_host: str | None = None,
    ) -> RunRecord:
        """Take a run over to resume it in this process: if its status is one of `states`,
        set it `running`, owned by this process (or `owner_pid` on `owner_host`), with a
        fresh heartbeat; clear what described its end (finished_at, error,
        duration_ms); a run that never started (`queued`) gets its `started_at` now (its
        duration is then counted from here, not from when it was queued). Returns the run.
        Of several claims at once, exactly one succeeds.

        Raises NotFoundError, or RunStateError if the run is in another state (the
        message names its status and `states`)."""
        required = tuple(states)
        for state in required:
            check_choice(state, RUN_STATES, "claim_run: state")
        if not self._db.is_sqlite:
            return await self._claim_in_one_statement(run_id, required, owner_pid, owner_host)
        values = {
            "status": "running",
            "owner_pid": owner_pid if owner_pid is not None else os.getpid(),
            "owner_host": owner_host or _HOST,
            "heartbeat_at": now(),
            "started_at": func.coalesce(Run.started_at, now()),
            "finished_at": None,
            "error": None,
            "duration_ms": None,
        }
        return await self._change_run(run_id, required, values, "resumed")

    async def _claim_in_one_statement(
        self,
        run_id: str,
        required: tuple[str, ...],
        owner_pid: int | None,
        owner_host: str | None,
    ) -> RunRecord:
        """Postgres: the claim, its notification and the run read back in one statement
        (one round trip, atomic in autocommit) instead of a transaction of four."""
        params = {
            "run_id": run_id,
            "required": list(required),
            "pid": owner_pid if owner_pid is not None else os.getpid(),
            "host": owner_host or _HOST,
            "at": now(),
        }

        async def work(conn: AsyncConnection) -> Row[Any] | None:
            return (await conn.execute(_CLAIM, params)).first()

        row = await self._db.read(work)  # autocommit on Postgres (Database.read)
        if row is None:

            async def status_of(conn: AsyncConnection) -> str | None:
                return await conn.scalar(select(Run.status).where(Run.id == run_id))

            status = await self._db.read(status_of)
            if status is None:
                raise no_run(run_id)
            raise RunStateError(run_id, status, required, "resumed")
        return await self._run_record(row, True)

    async def request_cancel(self, run_id: str) -> RunRecord:
        """Ask the run's owner to cancel it: sets `cancel_requested_at` (the first
        request's time is kept). Only a running or paused run can be cancelled; the owner
        notices it with `cancel_requested` and ends the run `cancelled`.

        Raises NotFoundError, or RunStateError for a run that already ended."""
        values = {"cancel_requested_at": func.coalesce(Run.cancel_requested_at, now())}
        return await self._change_run(run_id, CANCELLABLE, values, "cancelled")

    async def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for the run (one indexed read, cheap enough to
        poll). Raises NotFoundError."""
        query = select(Run.cancel_requested_at).where(Run.id == run_id)

        async def work(conn: AsyncConnection) -> bool:
            row = (await conn.execute(query)).first()
            if row is None:
                raise no_run(run_id)
            return row.cancel_requested_at is not None

        return await self._db.read(work)

    async def cancels_requested(self, run_ids: Iterable[str]) -> set[str]:
        """Which of `run_ids` a cancel was requested for, in one read (a RunService asks
        for all the runs it runs at once). Unknown ids are left out."""
        ids = list(run_ids)
        if not ids:
            return set()
        query = select(Run.id).where(Run.id.in_(ids), Run.cancel_requested_at.is_not(None))

        async def work(conn: AsyncConnection) -> set[str]:
            return {row.id for row in await conn.execute(query)}

        return await self._db.read(work)

    async def _change_run(
        self, run_id: str, required: tuple[str, ...], values: Mapping[str, Any], action: str
    ) -> RunRecord:
        """Apply `values` if the run's status is in `required`, in one UPDATE."""
        query = (
            update(Run)
            .where(Run.id == run_id, Run.status.in_(required))
            .values(**values)
            .returning(*Run.__table__.columns)
        )

        async def work(conn: AsyncConnection) -> Row[Any]:
            row = (await conn.execute(query)).first()
            if row is None:
                status = await conn.scalar(select(Run.status).where(Run.id == run_id))
                if status is None:
                    raise no_run(run_id)
                raise RunStateError(run_id, status, required, action)
            # A cancel asked reaches its owner now (other changes: the run's readers).
            await self._notify(
                conn, run_id, CANCEL_CHANNEL if action == "cancelled" else NOTIFY_CHANNEL
            )
            return row

        return await self._run_record(await self._db.write(work), True)
