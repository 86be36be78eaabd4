"""Runs of saved flows: start in the background, list, inspect, cancel, resume, re-run."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from nodeloom.fleet.jobs import Job
from nodeloom.server.errors import ApiError
from nodeloom.server.models import (
    RerunRequest,
    ResumeRequest,
    RunAccepted,
    RunDetail,
    RunList,
    RunModel,
    RunStart,
    RunState,
)
from nodeloom.server.routes.responses import LARGEST_INT, errors
from nodeloom.server.runtime import ServerState, State
from nodeloom.store import NotFoundError

router = APIRouter(tags=["runs"])


@router.post(
    "/api/flows/{flow_id}/runs",
    status_code=202,
    response_model=RunAccepted,
    responses=errors(404),
)
async def start_run(flow_id: str, body: RunStart, request: Request, state: State) -> JSONResponse:
    """Run a saved flow (its latest version, or `version`) in the background. Answers
    202 as soon as the run has started; follow it at `events_url`. A trigger the flow
    refuses is 422 (the run is recorded as failed)."""
    if body.version is not None and body.version > LARGEST_INT:
        # Bounded here, not in RunStart (server/models.py), to keep this fix in the route.
        raise ApiError(422, "invalid_request", f"version must be at most {LARGEST_INT}")
    saved = await state.store.get_flow(flow_id, body.version)
    flow = state.flow(saved.flow_id, saved.version, saved.document)
    job = Job.start(
        uuid.uuid4().hex,
        flow_id=saved.flow_id,
        flow_version=saved.version,
        message=body.message,
        trigger=body.trigger,
        chat_id=body.chat_id,
    )
    run_id = await state.submit(job, flow=flow)
    # --queue: recorded `queued` and enqueued (no read back: a worker may hold it already)
    return await _accepted(state, request, run_id, "queued" if state.queue else None)


@router.get("/api/runs", response_model=RunList, responses=errors())
async def list_runs(
    state: State,
    status: Annotated[
        list[RunState] | None, Query(description="one or several (repeat it)")
    ] = None,
    flow_id: str | None = None,
    chat_id: str | None = None,
    parent_run_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=LARGEST_INT)] = 0,
) -> dict[str, Any]:
    """Runs, the newest first (`parent_run_id`: the children of that run)."""
    records = await state.store.list_runs(
        status=status or None,
        flow_id=flow_id,
        chat_id=chat_id,
        parent_run_id=parent_run_id,
        limit=limit,
        offset=offset,
    )
    return {"runs": [r.to_json() for r in records], "limit": limit, "offset": offset}


@router.get("/api/runs/{run_id}", response_model=RunDetail, responses=errors(404))
async def get_run(run_id: str, state: State) -> dict[str, Any]:
    """A run's record, its timeline (each node execution, with inputs and outputs) and
    its children (the runs its nodes started; its parent is `parent_run_id`)."""
    record = await state.store.get_run(run_id)
    timeline = await state.store.node_executions(run_id)
    children = await state.store.list_runs(parent_run_id=run_id, limit=1000, resolve=False)
    return {
        **record.to_json(),
        "timeline": [row.to_json() for row in timeline],
        "children": [
            {
                "id": child.id,
                "status": child.status,
                "flow_id": child.flow_id,
                "flow_version": child.flow_version,
                "parent_node": child.parent_node,
                "created_at": child.created_at.isoformat(),
            }
            for child in reversed(children)
        ],
    }


@router.post("/api/runs/{run_id}/cancel", response_model=RunModel, responses=errors(404, 409))
async def cancel_run(run_id: str, state: State) -> dict[str, Any]:
    """Cancel a running, paused or interrupted run (409 if it has ended). A run executed
    by another process is asked to stop: it does within a heartbeat."""
    # A run live here is answered once the run service has recorded its cancellation.
    record = await state.runs.cancel(run_id)
    return record.to_json()


@router.post(
    "/api/runs/{run_id}/resume",
    status_code=202,
    response_model=RunAccepted,
    responses=errors(404, 409),
)
async def resume_run(
    run_id: str, body: ResumeRequest, request: Request, state: State
) -> JSONResponse:
    """Continue a paused or interrupted run in the background, answering waiting nodes
    with `answers`. 409 if the run is in another state."""
    await state.store.get_run(run_id)  # 404 before anything starts
    job = Job.resume(run_id, body.answers or None, body.replay_external)
    return await _accepted(state, request, await state.submit(job))


@router.post(
    "/api/runs/{run_id}/rerun",
    status_code=202,
    response_model=RunAccepted,
    responses=errors(404),
)
async def rerun(run_id: str, body: RerunRequest, request: Request, state: State) -> JSONResponse:
    """A new run of the same graph and trigger, running `from_node` and what follows it
    and taking every other node's outputs from this run. Answers with the new run."""
    job = Job.rerun(run_id, body.from_node)
    return await _accepted(state, request, await state.submit(job))


async def _accepted(
    state: ServerState, request: Request, run_id: str, status: str | None = None
) -> JSONResponse:
    if status is None:
        try:
            status = (await state.store.get_run(run_id)).status
        except NotFoundError:  # a re-run a worker has yet to take (--queue)
            status = "queued"
    run_url = str(request.url_for("get_run", run_id=run_id).path)
    body = RunAccepted(
        run_id=run_id,
        status=status,
        run_url=run_url,
        events_url=f"{run_url}/events",
    )
    return JSONResponse(body.model_dump(), status_code=202)
