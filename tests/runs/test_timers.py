"""The timer service's decisions on a real store (SQLite and Postgres), its clock given
by the test: which ticks a schedule fires after time nothing ran (`catch_up`), that two
services on one store fire a tick once, that a paused schedule fires nothing, and that a
paused run's passed deadline is handed out once. Launching is the server's seam
(`start`, `wake`): here it records what it is asked."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from nodeloom.runs.timers import TimerService
from nodeloom.store import ScheduleRecord, Store
from nodeloom.testing.builders import chain, node


class Launches:
    def __init__(self) -> None:
        self.ticks: list[datetime] = []
        self.triggers: list[dict[str, Any]] = []
        self.woken: list[tuple[str, dict[str, Any]]] = []

    async def start(self, schedule: ScheduleRecord, tick: datetime, trigger: dict) -> None:
        self.ticks.append(tick)
        self.triggers.append(trigger)

    async def wake(self, run_id: str, answers: dict[str, Any]) -> None:
        self.woken.append((run_id, answers))


def service(store: Store, launches: Launches) -> TimerService:
    return TimerService(store, start=launches.start, wake=launches.wake, grace=0.5)


async def scheduled(store: Store, catch_up: str, every: str = "1s") -> ScheduleRecord:
    document = chain(
        node("tick", "schedule-trigger", every=every, catch_up=catch_up),
        node("echo", "json-transform", expression="scheduled_at"),
    )
    saved = await store.save_flow("every second", document)
    await service(store, Launches()).step(datetime.now().astimezone() - timedelta(hours=1))
    (schedule,) = await store.list_schedules(saved.flow_id)
    return schedule


@pytest.mark.parametrize(
    ("catch_up", "late", "fired"),
    [
        ("none", 5.2, 1),  # the current tick, 0.2 s late: within grace
        ("none", 5.7, 0),  # every tick more than the grace late: missed
        ("last", 5.7, 1),
        ("all", 5.7, 6),
    ],
)
async def test_ticks_missed_while_nothing_ran_follow_catch_up(
    store: Store, catch_up: str, late: float, fired: int
):
    schedule = await scheduled(store, catch_up)
    due = schedule.next_fire_at
    assert due is not None
    launches = Launches()
    await service(store, launches).step(due + timedelta(seconds=late))
    expected = [due + timedelta(seconds=s) for s in range(6)][-fired:] if fired else []
    assert launches.ticks == expected
    (after,) = await store.list_schedules(schedule.flow_id)
    assert after.next_fire_at == due + timedelta(seconds=6)  # moved past now either way
    for trigger, tick in zip(launches.triggers, expected, strict=True):
        assert trigger["scheduled_at"] == tick.isoformat() and trigger["fired_at"]


async def test_two_services_on_one_store_fire_a_tick_once(store: Store):
    schedule = await scheduled(store, "none")
    assert schedule.next_fire_at is not None
    at = schedule.next_fire_at + timedelta(seconds=0.1)
    first, second = Launches(), Launches()
    await service(store, first).step(at)
    await service(store, second).step(at)
    assert len(first.ticks) + len(second.ticks) == 1


async def test_a_paused_schedule_fires_nothing_and_fires_again_once_resumed(store: Store):
    schedule = await scheduled(store, "last")
    assert schedule.next_fire_at is not None
    await store.pause_schedule(schedule.id)
    launches = Launches()
    await service(store, launches).step(schedule.next_fire_at + timedelta(seconds=3))
    assert launches.ticks == []
    (kept,) = await store.list_schedules(schedule.flow_id)
    assert kept.paused and kept.next_fire_at == schedule.next_fire_at  # a flag, not deleted
    await store.pause_schedule(schedule.id, False)
    await service(store, launches).step(schedule.next_fire_at + timedelta(seconds=3))
    assert launches.ticks == [schedule.next_fire_at + timedelta(seconds=3)]


async def test_a_new_version_without_the_trigger_drops_its_schedule(store: Store):
    schedule = await scheduled(store, "none")
    await store.save_flow("every second", chain(node("start", "chat-start")), schedule.flow_id)
    await service(store, Launches()).step()
    assert await store.list_schedules(schedule.flow_id) == []


async def test_a_passed_deadline_of_a_paused_run_is_handed_out_once(store: Store):
    run = await store.create_run(document=chain(node("start", "chat-start")))
    at = datetime.now().astimezone()
    await store.set_wakes(run.id, [("w", at, "wait")])
    await store.update_run(run.id, status="paused")
    first, second = Launches(), Launches()
    await service(store, first).step(at + timedelta(seconds=1))
    await service(store, second).step(at + timedelta(seconds=1))
    assert [run_id for run_id, _ in first.woken + second.woken] == [run.id]
    (_, answers) = (first.woken + second.woken)[0]
    assert answers == {"w": {"$timer": answers["w"]["$timer"]}}


async def test_a_deadline_of_a_run_that_is_not_paused_is_not_handed_out(store: Store):
    run = await store.create_run(document=chain(node("start", "chat-start")))
    at = datetime.now().astimezone()
    await store.set_wakes(run.id, [("w", at, "wait")])
    launches = Launches()
    await service(store, launches).step(at + timedelta(seconds=1))
    assert launches.woken == []


async def test_a_deadline_is_kept_when_its_run_is_resumed_for_another_node(store: Store):
    import nodeloom
    from nodeloom.runs import RunService
    from nodeloom.testing.builders import edge, graph

    flow = nodeloom.load(
        graph(
            node("start", "chat-start"),
            node("ok", "approval", name="Ok", timeout=60, on_timeout="port"),
            node("pause", "wait", name="Pause", seconds=30),
            node("q", "human-input", name="Q"),
            edge("start", "ok"),
            edge("start", "pause"),
            edge("start", "q"),
        )
    )
    runs = RunService(store, woken=True)
    try:
        paused = await runs.start(flow, "hi")
        before = {w.node_id: w.wake_at for w in await store.wakes_of(paused.run_id)}
        assert set(before) == {"ok", "pause"}
        again = await runs.resume(paused.run_id, answers={"Q": "an answer"})
        assert again.status == "paused"
        after = {w.node_id: w.wake_at for w in await store.wakes_of(paused.run_id)}
        assert after == before  # counted from when they first waited, not from the resume
    finally:
        await runs.aclose()
