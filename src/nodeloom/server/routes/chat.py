"""POST /api/flows/{id}/chat: one turn of a conversation with a saved flow.

The message is the trigger's `message`, the conversation the run's `chat_id` (made on the
first turn, sent back on the next), so nodes with memory see the earlier turns. The answer
is a `ChatReply` once the run has ended or paused; with `stream`, the run's events as they
happen (the frames of GET /api/runs/{id}/events) each node's `FlowStep` frame after its
event, then the ChatReply. With Chat Start's `showFlowSteps` off, only the run's own events
and the agents' content are sent (docs/api.md#chat-turns)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.fleet.jobs import Job
from nodeloom.flow_steps import FlowSteps, is_content, registry_lookup, shows_flow_steps
from nodeloom.graph.root_agent import USER_TOOLS_DISABLED, accepts_user_tools
from nodeloom.plugins.contract import Event
from nodeloom.server.chat import Turn, answer
from nodeloom.server.errors import ApiError
from nodeloom.server.models import (
    ChatReply,
    ChatTurnRequest,
    ChatTurnStarted,
    EventModel,
    RunSteps,
)
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State
from nodeloom.server.streams import run_events, sse
from nodeloom.store import NotFoundError
from nodeloom.user_tools import unknown_user_tools

router = APIRouter(tags=["chat"])


@router.post(
    "/api/flows/{flow_id}/chat",
    response_model=ChatReply,
    responses={
        200: {
            "description": "a ChatReply; with `stream`, SSE frames: `event: ChatTurn` "
            "(run_id, chat_id), the run's events (each node's `event: FlowStep` block after "
            "its event), then `event: ChatReply`",
            "content": {"text/event-stream": {"schema": EventModel.model_json_schema()}},
        },
        **errors(404),
    },
)
async def chat(flow_id: str, body: ChatTurnRequest, request: Request, state: State) -> Any:
    """Send the flow a message. The run is recorded like any other (GET /api/runs/{id});
    a paused turn is continued with POST /api/runs/{id}/resume."""
    saved = await state.store.get_flow(flow_id, body.version)
    flow = state.flow(saved.flow_id, saved.version, saved.document)
    _check_user_tools(flow, body.tools)
    turn = Turn(flow, body.chat_id or uuid.uuid4().hex)

    job = Job.start(
        turn.run_id,
        flow_id=saved.flow_id,
        flow_version=saved.version,
        message=body.message,
        trigger={"tools": body.tools} if body.tools else None,
        chat_id=turn.chat_id,
    )
    await state.submit(job, flow=flow, sink=turn, wrap=turn.run)
    run_url = str(request.url_for("get_run", run_id=turn.run_id).path)
    headers = {"X-Nodeloom-Run-Id": turn.run_id, "X-Nodeloom-Chat-Id": turn.chat_id}
    if not body.stream:
        return JSONResponse(_reply(turn, await turn.outcome, run_url), headers=headers)
    started = ChatTurnStarted(
        chat_id=turn.chat_id, run_id=turn.run_id, run_url=run_url, events_url=f"{run_url}/events"
    )
    events = run_events(state.store, state.broadcaster, turn.run_id, 0, state.signals)
    return StreamingResponse(
        _frames(turn, started, events),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **headers},
    )


@router.get("/api/runs/{run_id}/steps", response_model=RunSteps, responses=errors(404))
async def get_run_steps(run_id: str, state: State) -> dict[str, Any]:
    """The flow_step blocks of a run so far, built from its recorded events as a chat
    turn's are (what a chat shows after following a resumed run's events)."""
    record = await state.store.get_run(run_id)
    flow = None
    if record.flow_id is not None and record.flow_version is not None:
        try:
            saved = await state.store.get_flow(record.flow_id, record.flow_version)
            flow = state.flow(saved.flow_id, saved.version, saved.document)
        except NotFoundError:  # the flow was deleted since: generic summaries
            flow = None
    steps = FlowSteps(registry_lookup(flow.graph if flow else None, state.registry))
    for stored in await state.store.events(run_id):
        steps.push(stored.to_event())
    blocks = json.loads(json.dumps(steps.blocks, default=str))
    return {"steps": blocks, "show_flow_steps": shows_flow_steps(flow.graph) if flow else True}


async def _frames(
    turn: Turn,
    started: ChatTurnStarted,
    events: AsyncGenerator[Event, None],
) -> AsyncIterator[str]:
    yield f"event: ChatTurn\ndata: {started.model_dump_json()}\n\n"
    steps = FlowSteps(turn.lookup) if turn.show_steps else None
    pending: list[dict[str, Any]] = []

    async def shown() -> AsyncGenerator[Event, None]:
        async for event in events:
            if steps is None:
                if is_content(event):
                    yield event
                continue
            block = steps.push(event)
            if block is not None:
                pending.append(block)
            yield event

    async for frame in sse(shown()):
        yield frame
        while pending:
            block = json.dumps(pending.pop(0), default=str)
            yield f"event: FlowStep\ndata: {block}\n\n"
    reply = _reply(turn, await turn.outcome, started.run_url)
    yield f"event: ChatReply\ndata: {json.dumps(reply)}\n\n"


def _reply(turn: Turn, result: RunResult, run_url: str) -> dict[str, Any]:
    """The ChatReply, as JSON values (a value no JSON type holds becomes its text)."""
    completed = result.status is RunStatus.COMPLETED
    reply = {
        "chat_id": turn.chat_id,
        "run_id": result.run_id,
        "status": result.status.value,
        "answer": answer(turn.flow, result) if completed else None,
        "usage": {key: int(value) for key, value in result.usage.items()},
        # What each waiting node asks (as its `waiting` event says it): prompt, fields...
        "waiting": result.waiting if result.status is RunStatus.PAUSED else [],
        "error": result.error if result.status is RunStatus.FAILED else None,
        "run_url": run_url,
        "events_url": f"{run_url}/events",
        "steps": turn.step_blocks(),
    }
    return dict(json.loads(json.dumps(reply, default=str)))


def _check_user_tools(flow: Flow, tools: list[str] | None) -> None:
    """A turn's user tools are refused before the run unless a Chat Start takes them
    (`includeUserTools`) and the server offers every name."""
    if not tools:
        return
    if not accepts_user_tools(flow.graph):
        message = USER_TOOLS_DISABLED.format(tools=", ".join(tools))
        raise ApiError(422, "user_tools_disabled", message, field="tools")
    message = unknown_user_tools(tools, flow.services.user_tools)
    if message is not None:
        raise ApiError(422, "unknown_user_tool", message, field="tools")
