"""The server's timer service: `nodeloom.runs.timers.TimerService` (what fires, decided
by leases in the store), launching what fires through the server's launch path, the same
as a run started or resumed by the API (`ServerState.submit`): where runs go to a worker
fleet (`--queue`), so do these."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from nodeloom.fleet.jobs import Job
from nodeloom.runs.timers import TimerService
from nodeloom.server.runtime import ServerState
from nodeloom.store import ScheduleRecord


def timer_service(state: ServerState) -> TimerService:
    async def start(schedule: ScheduleRecord, tick: datetime, trigger: dict[str, Any]) -> str:
        saved = await state.store.get_flow(schedule.flow_id, schedule.flow_version)
        flow = state.flow(saved.flow_id, saved.version, saved.document)
        job = Job.start(
            uuid.uuid4().hex, flow_id=saved.flow_id, flow_version=saved.version, trigger=trigger
        )
        return await state.submit(job, flow=flow)

    async def wake(run_id: str, answers: dict[str, Any]) -> str:
        return await state.submit(Job.resume(run_id, answers))

    return TimerService(state.store, start=start, wake=wake)


@contextlib.asynccontextmanager
async def running_timers(state: ServerState) -> AsyncIterator[TimerService]:
    """The timer service, running in the background for the life of the block."""
    service = timer_service(state)
    task = asyncio.create_task(service.run(), name="nodeloom-timers")
    try:
        yield service
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
