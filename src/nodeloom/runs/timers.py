"""The timer service: what fires, when. Schedule Triggers of saved flows fire once per
tick, and paused runs whose deadline passed (a Wait's wake time, a person's timeout) are
woken, exactly once across every process on one store: each decision is a lease in the
store (`Store.claim_tick`, `Store.lease_wakes`; see nodeloom.store.timers).

How a fired run is launched is not decided here: the service calls `start(schedule,
tick, trigger)` and `wake(run_id, answers)`, which the server points at its launch path
(a background run here, or a job for a worker fleet). See docs/automations.md.

    service = TimerService(store, start=..., wake=...)
    task = asyncio.create_task(service.run())   # until cancelled
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from nodeloom.engine.human import timer_answer
from nodeloom.nodes.core.schedule_trigger.schedule import ScheduleError, parse_schedule, to_fire
from nodeloom.store import ScheduleRecord, Store

log = logging.getLogger("nodeloom.timers")

SCHEDULE_TYPE = "schedule-trigger"
POLL_SECONDS = 1.0  # the longest sleep: a flow saved meanwhile is seen within it
MISFIRE_GRACE = 5.0  # a tick later than this was missed (nothing ran): see catch_up
WAKE_LEASE = 60.0  # a wake taken by a process that died is taken again after this
ENV_POLL = "NODELOOM_TIMER_POLL"
ENV_GRACE = "NODELOOM_SCHEDULE_GRACE"

Start = Callable[[ScheduleRecord, datetime, dict[str, Any]], Awaitable[Any]]
Wake = Callable[[str, dict[str, Any]], Awaitable[Any]]


def _env_seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


class TimerService:
    """Fires due schedule ticks and wakes due paused runs, forever (`run`) or once
    (`step`)."""

    def __init__(
        self,
        store: Store,
        *,
        start: Start,
        wake: Wake,
        poll: float | None = None,
        grace: float | None = None,
    ) -> None:
        self.store = store
        self.start = start
        self.wake = wake
        self.poll = poll if poll is not None else _env_seconds(ENV_POLL, POLL_SECONDS)
        self.grace = grace if grace is not None else _env_seconds(ENV_GRACE, MISFIRE_GRACE)
        self.synced: dict[str, int] = {}  # flow id -> the version its schedules are of

    async def run(self) -> None:
        """Step, then sleep until the next tick or deadline (at most `poll`), forever."""
        while True:
            try:
                await self.step()
                delay = await self._until_next()
            except asyncio.CancelledError:
                raise
            except Exception:  # a store hiccup: log it, try again next time
                log.exception("timer service: a step failed; trying again")
                delay = self.poll
            await asyncio.sleep(delay)

    async def step(self, now: datetime | None = None) -> None:
        """One pass: sync the schedules with the saved flows, fire the due ticks, wake
        the due paused runs."""
        now = now or datetime.now(UTC)
        await sync_schedules(self.store, self.synced)
        for schedule in await self.store.list_schedules(due_by=now):
            await self._fire(schedule, now)
        wakes = await self.store.lease_wakes(now, WAKE_LEASE)
        by_run: dict[str, dict[str, Any]] = {}
        for wake in wakes:
            answers = by_run.setdefault(wake.run_id, {})
            answers[wake.node_id] = timer_answer(wake.wake_at.isoformat())
        for run_id, answers in by_run.items():
            log.info("timer service: waking run %s (%s)", run_id, ", ".join(answers))
            with _logged(f"waking run {run_id}"):
                await self.wake(run_id, answers)

    async def _fire(self, schedule: ScheduleRecord, now: datetime) -> None:
        try:
            spec = parse_schedule(schedule.spec)
        except ScheduleError:
            return  # the flow's validation reports it; sync left it out of newer versions
        assert schedule.next_fire_at is not None
        ticks, following = to_fire(spec, schedule.next_fire_at, now, self.grace)
        if not await self.store.claim_tick(schedule.id, schedule.next_fire_at, following):
            return  # another process fired it, or it was paused meanwhile
        fired_at = datetime.now(UTC).isoformat()
        for tick in ticks:
            trigger = {"scheduled_at": tick.isoformat(), "fired_at": fired_at, "message": ""}
            with _logged(f"starting flow {schedule.flow_id} for its tick {tick.isoformat()}"):
                await self.start(schedule, tick, trigger)

    async def _until_next(self) -> float:
        """Seconds until the next tick or deadline, at most `poll`, at least 10 ms."""
        upcoming = [
            s.next_fire_at
            for s in await self.store.list_schedules()
            if not s.paused and s.next_fire_at is not None
        ]
        wake = await self.store.next_wake()
        if wake is not None:
            upcoming.append(wake)
        if not upcoming:
            return self.poll
        delay = (min(upcoming) - datetime.now(UTC)).total_seconds()
        return min(max(delay, 0.01), self.poll)


async def sync_schedules(store: Store, synced: dict[str, int] | None = None) -> None:
    """Record the Schedule Triggers of every saved flow's latest version (`synced`: flow
    id -> version already recorded, to skip; updated)."""
    synced = {} if synced is None else synced
    now = datetime.now(UTC)
    for summary in await store.list_flows():
        if synced.get(summary.id) == summary.latest_version:
            continue
        saved = await store.get_flow(summary.id)
        found: dict[str, tuple[Mapping[str, Any], datetime | None]] = {}
        for node_id, data in schedule_nodes(saved.document):
            try:
                spec = parse_schedule(data)
            except ScheduleError as exc:
                log.warning("flow %s, node %s: no schedule: %s", summary.id, node_id, exc)
                continue
            found[node_id] = (spec.to_json(), spec.next_after(now))
        await store.sync_schedules(summary.id, saved.version, found)
        synced[summary.id] = saved.version


def schedule_nodes(document: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(node id, parameters) of each Schedule Trigger of a graph document."""
    nodes = document.get("nodes")
    found = []
    for node in nodes if isinstance(nodes, list) else []:
        if isinstance(node, Mapping) and node.get("type") == SCHEDULE_TYPE:
            data = node.get("data")
            found.append((str(node.get("id")), dict(data) if isinstance(data, Mapping) else {}))
    return found


async def deadlines_of(store: Store, run_id: str) -> dict[str, float]:
    """A paused run's deadlines by node id (epoch seconds), for its resume."""
    return {w.node_id: w.wake_at.timestamp() for w in await store.wakes_of(run_id)}


def deadlines(waiting: list[dict[str, Any]]) -> list[tuple[str, datetime, str]]:
    """(node id, wake time, kind) of each waiting node with a deadline (`wake_at`)."""
    return [
        (str(w["node_id"]), datetime.fromtimestamp(float(w["wake_at"]), UTC), str(w["kind"]))
        for w in waiting
        if isinstance(w.get("wake_at"), (int, float))
    ]


@contextlib.contextmanager
def _logged(what: str) -> Any:
    try:
        yield
    except Exception as exc:  # one launch failing does not stop the others
        log.warning("timer service: %s failed: %s", what, exc)


__all__ = ["TimerService", "deadlines", "schedule_nodes", "sync_schedules"]
