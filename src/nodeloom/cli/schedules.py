"""`nodeloom schedules`: the Schedule Triggers of the saved flows in the run store (the
one `nodeloom serve` uses: NODELOOM_DATABASE_URL): list them with their next fire time,
pause and resume them (a flag; the schedule stays). See docs/automations.md."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TypeVar

import click

from nodeloom.cli.foreground import exit_on_error
from nodeloom.cli.output import Progress
from nodeloom.runs.timers import sync_schedules
from nodeloom.store import ScheduleRecord, Store

T = TypeVar("T")


@click.group("schedules")
def schedules_command() -> None:
    """The saved flows' schedules: list, pause, resume.

    Exit codes: 2 for an unknown schedule id, 1 if the run store fails."""


@schedules_command.command("list")
@click.option("--flow", "flow_id", help="Only this flow's schedules (its id).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_schedules(flow_id: str | None, as_json: bool) -> None:
    """Each schedule: id, flow, cron or every, next fire time (UTC), paused."""

    async def work(store: Store) -> list[ScheduleRecord]:
        await sync_schedules(store)
        return await store.list_schedules(flow_id)

    for record in _with_store(work, as_json):
        _show(record, as_json)


@schedules_command.command("pause")
@click.argument("schedule_id")
@click.option("--json", "as_json", is_flag=True)
def pause(schedule_id: str, as_json: bool) -> None:
    """Stop SCHEDULE_ID from firing (it is kept; `resume` starts it again)."""
    _show(_with_store(lambda store: _set(store, schedule_id, True), as_json), as_json)


@schedules_command.command("resume")
@click.argument("schedule_id")
@click.option("--json", "as_json", is_flag=True)
def resume(schedule_id: str, as_json: bool) -> None:
    """Let SCHEDULE_ID fire again, from its next tick (ticks missed while paused follow
    its catch_up)."""
    _show(_with_store(lambda store: _set(store, schedule_id, False), as_json), as_json)


async def _set(store: Store, schedule_id: str, paused: bool) -> ScheduleRecord:
    await sync_schedules(store)
    return await store.pause_schedule(schedule_id, paused)


def _show(record: ScheduleRecord, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(record.to_json()))
        return
    data = record.to_json()
    if data["cron"]:
        when = f"cron {data['cron']} ({data['timezone']})"
    else:
        when = f"every {data['every']:g}s"
    state = "paused" if record.paused else f"next {data['next_fire_at']}"
    click.echo(f"{record.id}  {record.flow_name}  {when}  catch_up {data['catch_up']}  {state}")


def _with_store(work: Callable[[Store], Awaitable[T]], as_json: bool) -> T:
    async def go() -> T:
        async with await Store.open() as store:
            return await work(store)

    with exit_on_error(Progress(), as_json):
        return asyncio.run(go())
    raise AssertionError("unreachable")  # exit_on_error exits
