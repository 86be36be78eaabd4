"""The Store's timers: schedules of saved flows and deadlines of paused runs.

What fires is decided here, by one conditional write each, so that of several servers on
one store exactly one fires a given tick or deadline:

- a schedule's tick fires where `claim_tick` moves `next_fire_at` from the tick it read
  to the next one (`UPDATE ... WHERE id = ? AND next_fire_at = ? AND NOT paused`);
- a paused run's deadline (`wakes`) is leased by `lease_wakes` (`UPDATE ... WHERE
  leased_until IS NULL OR leased_until < now`) for `lease` seconds: if the process that
  took it dies before the run is resumed, another takes it when the lease ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.access import Access, now
from nodeloom.store.errors import NotFoundError
from nodeloom.store.records import ScheduleRecord, WakeRecord
from nodeloom.store.schema import Flow, Run, Schedule, Wake


class Timers(Access):
    """Schedules (sync, list, pause, claim a tick) and paused runs' deadlines."""

    # -- schedules ------------------------------------------------------------------------

    async def sync_schedules(
        self,
        flow_id: str,
        version: int,
        found: Mapping[str, tuple[Mapping[str, Any], datetime | None]],
    ) -> None:
        """Make the flow's schedules those of its version `version`: `found` maps each
        Schedule Trigger's node id to (spec, first tick). A new one starts at its first
        tick; one whose spec changed starts again from its first tick; one unchanged keeps
        its next tick and its pause flag. Those of an older version that are gone are
        deleted. Rows already at a newer version are left alone (idempotent: every server
        syncs)."""
        at = now()

        async def work(conn: AsyncConnection) -> None:
            rows = {
                row.node_id: row
                for row in await conn.execute(select(Schedule).where(Schedule.flow_id == flow_id))
            }
            if any(row.flow_version > version for row in rows.values()):
                return
            for node_id, row in rows.items():
                if node_id not in found:
                    await conn.execute(delete(Schedule).where(Schedule.id == row.id))
            for node_id, (spec, first) in found.items():
                text = json.dumps(dict(spec), sort_keys=True)
                row = rows.get(node_id)
                if row is None:
                    await conn.execute(
                        self._insert(Schedule)
                        .values(
                            id=f"{flow_id}:{node_id}",
                            flow_id=flow_id,
                            node_id=node_id,
                            flow_version=version,
                            spec=text,
                            next_fire_at=first,
                            paused=False,
                            updated_at=at,
                        )
                        .on_conflict_do_nothing()
                    )
                elif row.flow_version < version:
                    changes: dict[str, Any] = {"flow_version": version, "updated_at": at}
                    if row.spec != text:
                        changes.update(spec=text, next_fire_at=first)
                    await conn.execute(
                        update(Schedule)
                        .where(Schedule.id == row.id, Schedule.flow_version < version)
                        .values(**changes)
                    )

        await self._db.write(work)

    async def list_schedules(
        self, flow_id: str | None = None, *, due_by: datetime | None = None
    ) -> list[ScheduleRecord]:
        """The schedules of flows not deleted (of one flow), by next fire time; `due_by`:
        only those not paused whose next tick is at or before it."""
        query = (
            select(*Schedule.__table__.columns, Flow.name.label("flow_name"))
            .join(Flow, Flow.id == Schedule.flow_id)
            .where(Flow.deleted_at.is_(None))
            .order_by(Schedule.next_fire_at, Schedule.id)
        )
        if flow_id is not None:
            query = query.where(Schedule.flow_id == flow_id)
        if due_by is not None:
            query = query.where(Schedule.paused.is_(False), Schedule.next_fire_at <= due_by)

        async def work(conn: AsyncConnection) -> list[ScheduleRecord]:
            return [_schedule(row) for row in await conn.execute(query)]

        return await self._db.read(work)

    async def get_schedule(self, schedule_id: str) -> ScheduleRecord:
        """One schedule; NotFoundError names the ids there are."""
        for record in await self.list_schedules():
            if record.id == schedule_id:
                return record
        known = ", ".join(r.id for r in await self.list_schedules()) or "none"
        raise NotFoundError(f"no schedule with id {schedule_id!r}; schedules: {known}")

    async def pause_schedule(self, schedule_id: str, paused: bool = True) -> ScheduleRecord:
        """Set a schedule's pause flag (a paused schedule keeps its row and fires no tick).
        Raises NotFoundError."""
        await self.get_schedule(schedule_id)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(
                update(Schedule)
                .where(Schedule.id == schedule_id)
                .values(paused=paused, updated_at=now())
            )

        await self._db.write(work)
        return await self.get_schedule(schedule_id)

    async def claim_tick(self, schedule_id: str, tick: datetime, following: datetime) -> bool:
        """The lease of one tick: move the schedule's next fire time from `tick` to
        `following`. True for the one caller whose UPDATE did it (it fires the tick);
        False if another did, or the schedule is paused, changed or gone."""

        async def work(conn: AsyncConnection) -> bool:
            result = await conn.execute(
                update(Schedule)
                .where(
                    Schedule.id == schedule_id,
                    Schedule.next_fire_at == tick,
                    Schedule.paused.is_(False),
                )
                .values(next_fire_at=following, last_fired_at=tick)
            )
            return bool(result.rowcount == 1)

        return await self._db.write(work)

    # -- deadlines of paused runs ---------------------------------------------------------

    async def set_wakes(self, run_id: str, wakes: Iterable[tuple[str, datetime, str]]) -> None:
        """Replace a run's deadlines by `wakes` ((node id, wake time, kind) each): called
        each time the run pauses (none: it has none now)."""
        rows = [
            {"run_id": run_id, "node_id": node, "wake_at": at, "kind": kind}
            for node, at, kind in wakes
        ]

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(delete(Wake).where(Wake.run_id == run_id))
            if rows:
                await conn.execute(self._insert(Wake), rows)

        await self._db.write(work)

    async def wakes_of(self, run_id: str) -> list[WakeRecord]:
        """The deadlines a run had when it last paused."""
        query = select(Wake.run_id, Wake.node_id, Wake.wake_at, Wake.kind).where(
            Wake.run_id == run_id
        )

        async def work(conn: AsyncConnection) -> list[WakeRecord]:
            return [WakeRecord(*row) for row in await conn.execute(query)]

        return await self._db.read(work)

    async def next_wake(self) -> datetime | None:
        """The earliest deadline of a paused run (the timer service sleeps until it)."""
        query = (
            select(Wake.wake_at)
            .join(Run, Run.id == Wake.run_id)
            .where(Run.status == "paused")
            .order_by(Wake.wake_at)
            .limit(1)
        )

        async def work(conn: AsyncConnection) -> datetime | None:
            return await conn.scalar(query)

        return await self._db.read(work)

    async def lease_wakes(self, due_by: datetime, lease: float) -> list[WakeRecord]:
        """Take the deadlines due by `due_by` of paused runs, each leased to the caller
        for `lease` seconds (not taken while another's lease runs). Each is returned to
        exactly one caller."""
        at = now()
        free = or_(Wake.leased_until.is_(None), Wake.leased_until < at)
        due = (
            select(Wake.run_id, Wake.node_id, Wake.wake_at, Wake.kind)
            .join(Run, Run.id == Wake.run_id)
            .where(Run.status == "paused", Wake.wake_at <= due_by, free)
            .order_by(Wake.wake_at)
            .limit(100)
        )

        async def work(conn: AsyncConnection) -> list[WakeRecord]:
            taken = []
            for row in (await conn.execute(due)).all():
                result = await conn.execute(
                    update(Wake)
                    .where(and_(Wake.run_id == row.run_id, Wake.node_id == row.node_id), free)
                    .values(leased_until=at + timedelta(seconds=lease))
                )
                if result.rowcount == 1:
                    taken.append(WakeRecord(row.run_id, row.node_id, row.wake_at, row.kind))
            return taken

        return await self._db.write(work)


def _schedule(row: Any) -> ScheduleRecord:
    schedule = row
    return ScheduleRecord(
        id=schedule.id,
        flow_id=schedule.flow_id,
        node_id=schedule.node_id,
        flow_version=schedule.flow_version,
        spec=json.loads(schedule.spec),
        next_fire_at=schedule.next_fire_at,
        last_fired_at=schedule.last_fired_at,
        paused=bool(schedule.paused),
        updated_at=schedule.updated_at,
        flow_name=row.flow_name,
    )
