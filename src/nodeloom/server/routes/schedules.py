"""Schedules over HTTP, as `nodeloom schedules`: each Schedule Trigger of a saved flow
with its next fire time; pausing one is a flag (it stays, and fires no tick until
resumed). See docs/automations.md."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from nodeloom.runs.timers import sync_schedules
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State

router = APIRouter(tags=["schedules"])


class ScheduleModel(BaseModel):
    id: str
    flow_id: str
    flow_name: str
    node_id: str
    flow_version: int
    cron: str | None
    every: float | None
    timezone: str | None
    catch_up: str | None
    next_fire_at: str | None
    last_fired_at: str | None
    paused: bool


class ScheduleList(BaseModel):
    schedules: list[ScheduleModel]


@router.get("/api/schedules", response_model=ScheduleList, responses=errors())
async def list_schedules(state: State) -> dict[str, Any]:
    """Every schedule of the saved flows, the next to fire first."""
    await sync_schedules(state.store)
    return {"schedules": [r.to_json() for r in await state.store.list_schedules()]}


@router.get("/api/flows/{flow_id}/schedules", response_model=ScheduleList, responses=errors(404))
async def flow_schedules(flow_id: str, state: State) -> dict[str, Any]:
    """The schedules of one flow (its latest version's Schedule Triggers)."""
    await state.store.get_flow(flow_id)  # 404 for an unknown flow
    await sync_schedules(state.store)
    return {"schedules": [r.to_json() for r in await state.store.list_schedules(flow_id)]}


@router.post(
    "/api/schedules/{schedule_id}/pause", response_model=ScheduleModel, responses=errors(404)
)
async def pause_schedule(schedule_id: str, state: State) -> dict[str, Any]:
    """Pause a schedule: it fires no tick until resumed (ticks missed meanwhile follow
    its catch_up)."""
    await sync_schedules(state.store)  # a flow saved a moment ago has its schedules
    return (await state.store.pause_schedule(schedule_id, True)).to_json()


@router.post(
    "/api/schedules/{schedule_id}/resume", response_model=ScheduleModel, responses=errors(404)
)
async def resume_schedule(schedule_id: str, state: State) -> dict[str, Any]:
    """Let a paused schedule fire again."""
    await sync_schedules(state.store)
    return (await state.store.pause_schedule(schedule_id, False)).to_json()
