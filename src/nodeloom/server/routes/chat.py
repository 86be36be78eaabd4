"""POST /api/flows/{id}/chat: one turn of a conversation with a saved flow.

The message is the trigger's `message`, the conversation the run's `chat_id` (made on the
first turn, sent back on the next), so nodes with memory see the earlier turns. The answer
is a `ChatReply` once the run has ended or paused; with `stream`, the run's events as they
happen (the frames of GET /api/runs/{id}/events), then the ChatReply."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from nodeloom.engine.events import EventSink, FanoutSink
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.plugins.contract import Event
from nodeloom.server.chat import Turn, answer
from nodeloom.server.models import ChatReply, ChatTurnRequest, ChatTurnStarted, EventModel
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State
from nodeloom.server.streams import run_events, sse

router = APIRouter(tags=["chat"])


@router.post(
    "/api/flows/{flow_id}/chat",
    response_model=ChatReply,
    responses={
        200: {
            "description": "a ChatReply; with `stream`, SSE frames: `event: ChatTurn` "
            "(run_id, chat_id), the run's events, then `event: ChatReply`",
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
    turn = Turn(flow, body.chat_id or uuid.uuid4().hex)

    def begin(sink: EventSink) -> Any:
        return turn.run(
            state.runs.start(
                flow,
                body.message,
                sink=FanoutSink(sink, turn),
                chat_id=turn.chat_id,
                run_id=turn.run_id,
                flow_id=saved.flow_id,
                flow_version=saved.version,
            )
        )

    await state.launcher.launch(begin, turn.run_id)
    run_url = str(request.url_for("get_run", run_id=turn.run_id).path)
    headers = {"X-Nodeloom-Run-Id": turn.run_id, "X-Nodeloom-Chat-Id": turn.chat_id}
    if not body.stream:
        return JSONResponse(_reply(turn, await turn.outcome, run_url), headers=headers)
    started = ChatTurnStarted(
        chat_id=turn.chat_id, run_id=turn.run_id, run_url=run_url, events_url=f"{run_url}/events"
    )
    events = run_events(state.store, state.broadcaster, turn.run_id, 0)
    return StreamingResponse(
        _frames(turn, started, events),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **headers},
    )


async def _frames(
    turn: Turn,
    started: ChatTurnStarted,
    events: AsyncGenerator[Event, None],
) -> AsyncIterator[str]:
    yield f"event: ChatTurn\ndata: {started.model_dump_json()}\n\n"
    async for frame in sse(events):
        yield frame
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
    }
    return dict(json.loads(json.dumps(reply, default=str)))
