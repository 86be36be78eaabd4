"""GET /api/runs/{id}/events: a run's events as a resumable Server-Sent Events stream."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from nodeloom.server.errors import ApiError
from nodeloom.server.models import EventModel
from nodeloom.server.routes.responses import LARGEST_INT, errors
from nodeloom.server.runtime import State
from nodeloom.server.streams import run_events, sse

router = APIRouter(tags=["runs"])


@router.get(
    "/api/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "frames `id: <seq>`, `event: <name>`, `data: <event JSON>`",
            "content": {"text/event-stream": {"schema": EventModel.model_json_schema()}},
        },
        **errors(404),
    },
)
async def run_events_stream(
    run_id: str,
    state: State,
    from_seq: Annotated[
        int | None, Query(ge=1, le=LARGEST_INT, description="the first seq to send")
    ] = None,
    last_event_id: Annotated[str | None, Header(description="resume after this seq")] = None,
) -> StreamingResponse:
    """Every event of the run (from `from_seq`, or after `Last-Event-ID`), then its live
    events as they happen; the stream ends when the run has ended or paused."""
    after = _after(from_seq, last_event_id)
    await state.store.get_run(run_id)  # 404 before the stream starts
    return StreamingResponse(
        sse(run_events(state.store, state.broadcaster, run_id, after, state.signals)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _after(from_seq: int | None, last_event_id: str | None) -> int:
    """The last seq the client has: Last-Event-ID wins over from_seq (a browser's
    EventSource reconnects with the same URL and the header)."""
    if last_event_id is not None and last_event_id.strip():
        try:
            seen = int(last_event_id)
        except ValueError:
            raise ApiError(
                422,
                "invalid_request",
                f"Last-Event-ID must be an event seq (an integer), not {last_event_id!r}",
            ) from None
        if not 0 <= seen <= LARGEST_INT:
            raise ApiError(
                422, "invalid_request", f"Last-Event-ID must be between 0 and {LARGEST_INT}"
            )
        return seen
    return from_seq - 1 if from_seq is not None else 0
