"""GET /api/runs/{id}/ws: a run's events over a WebSocket, for clients that prefer one.

It carries what the SSE stream carries (`streams.run_events`: the store, then the live
channel, de-duplicated by seq), one JSON text message per event: the event's JSON plus
`frame`, the name the SSE stream gives as `event:`. `?from_seq=N` starts at event N, so a
client that reconnects with the last seq it saw + 1 misses nothing. After the run's last
event the server closes with 1000.

Browsers cannot set headers on a WebSocket, so the token may come as `?token=` as well as
in `Authorization: Bearer`. Without a valid one the socket is closed with 1008 before it is
accepted, which the server answers as HTTP 403 on the handshake. (Not a 401 with the API's
error body: uvicorn 0.54 logs a spurious error after an ASGI denial response.) An unknown
run is accepted, then closed with 4404, so a browser can tell it apart.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Annotated

from fastapi import APIRouter, Query, WebSocket, WebSocketDisconnect
from starlette import status

from nodeloom.plugins.contract import Event
from nodeloom.server.runtime import ServerState
from nodeloom.server.streams import event_name, run_events
from nodeloom.store import NotFoundError

router = APIRouter(tags=["runs"])

RUN_NOT_FOUND = 4404  # a close code in the private range, echoing HTTP 404


def message(event: Event) -> str:
    """The event's JSON with its SSE frame name as `frame`."""
    body = {**event.to_json(), "frame": event_name(event)}
    return json.dumps(body, separators=(",", ":"), default=str)


@router.websocket("/api/runs/{run_id}/ws")
async def run_events_socket(
    websocket: WebSocket,
    run_id: str,
    from_seq: Annotated[int, Query(ge=1, description="the first seq to send")] = 1,
    token: Annotated[str | None, Query(description="the bearer token, for browsers")] = None,
) -> None:
    state: ServerState = websocket.app.state.nodeloom
    refusal = _refusal(websocket, state, token)
    if refusal is not None:  # closing before accepting: the handshake is answered 403
        await websocket.close(status.WS_1008_POLICY_VIOLATION, reason=_short(refusal))
        return
    await websocket.accept()
    try:
        await state.store.get_run(run_id)
    except NotFoundError as exc:
        await websocket.close(RUN_NOT_FOUND, reason=_short(str(exc)))
        return
    events = run_events(state.store, state.broadcaster, run_id, from_seq - 1, state.signals)
    if await _stream(websocket, events):
        await websocket.close(status.WS_1000_NORMAL_CLOSURE)


async def _stream(websocket: WebSocket, events: AsyncGenerator[Event, None]) -> bool:
    """Send every event until the run is over (True) or the client has gone (False)."""
    sending = asyncio.create_task(_send_all(websocket, events))
    watching = asyncio.create_task(_until_gone(websocket))
    try:
        done, _ = await asyncio.wait({sending, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sending, watching):
            task.cancel()
        await asyncio.gather(sending, watching, return_exceptions=True)
    if watching in done or sending not in done:
        return False
    error = sending.exception()
    if error is None:
        return True
    if isinstance(error, WebSocketDisconnect | OSError):
        return False
    raise error


async def _send_all(websocket: WebSocket, events: AsyncGenerator[Event, None]) -> None:
    async with aclosing(events) as stream:
        async for event in stream:
            await websocket.send_text(message(event))


async def _until_gone(websocket: WebSocket) -> None:
    """Return when the client disconnects (it has nothing to send us)."""
    while (await websocket.receive())["type"] != "websocket.disconnect":
        pass


def _refusal(websocket: WebSocket, state: ServerState, token: str | None) -> str | None:
    """Why the connection is refused, or None to accept it."""
    if state.config.dev:
        return None
    scheme, _, credentials = websocket.headers.get("authorization", "").partition(" ")
    presented = credentials.strip() if scheme.lower() == "bearer" else None
    presented = presented or token
    if not presented:
        return "missing token: send `Authorization: Bearer <token>` or `?token=<token>`"
    if state.tokens.verify(presented) is None:
        return "invalid or revoked token"
    return None


def _short(reason: str) -> str:
    """A close reason fits in 123 bytes."""
    encoded = reason.encode()
    return reason if len(encoded) <= 123 else encoded[:120].decode(errors="ignore") + "..."
