"""A run's events as a resumable Server-Sent Events stream.

Each frame carries the event's `seq` as its `id:`, so a client that reconnects with
`Last-Event-ID: N` gets every event after N, once and in order, whether the run is live
or finished: first from the store, then from the run's live channel (which is ahead of
the store, so the two overlap and are de-duplicated by seq). A run live in another
process (a worker, another server) is followed by reading the store again each time
Postgres notifies that it changed (nodeloom.fleet.signals), or, without notifications
(SQLite), every POLL_SECONDS. The stream ends once the run has ended or paused and
every event of it has been sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator

from nodeloom.fleet.signals import RunSignals, Subscription
from nodeloom.plugins.contract import Event
from nodeloom.server.broadcast import Broadcaster
from nodeloom.store import Store

POLL_SECONDS = 0.5
NOTIFIED_POLL_SECONDS = 5.0  # with notifications: a read now and then all the same
LIVE_STATES = ("running", "queued")  # events may still come
KEEPALIVE_SECONDS = 15.0
INTERRUPTED_CHECK_SECONDS = 60.0

# Frame names follow the seed 003 chat mapping; the other events keep their own names.
_NAMES = {"started": "FlowNodeStarted", "completed": "FlowNodeCompleted", "error": "RunError"}


def event_name(event: Event) -> str:
    if event.event_type == "progress" and "token" in (event.data or {}):
        return "RunContent"
    return _NAMES.get(event.event_type, event.event_type)


def frame(event: Event) -> str:
    data = json.dumps(event.to_json(), separators=(",", ":"), default=str)
    return f"id: {event.seq}\nevent: {event_name(event)}\ndata: {data}\n\n"


async def run_events(
    store: Store,
    broadcaster: Broadcaster,
    run_id: str,
    after: int,
    signals: RunSignals | None = None,
) -> AsyncGenerator[Event, None]:
    """The run's events with seq > `after`, in order, each once, until the run is over."""
    with contextlib.ExitStack() as stack:
        changed = stack.enter_context(signals.subscribe(run_id)) if signals else None
        async for event in _run_events(store, broadcaster, run_id, after, changed):
            yield event


async def _run_events(
    store: Store,
    broadcaster: Broadcaster,
    run_id: str,
    after: int,
    changed: Subscription | None,
) -> AsyncGenerator[Event, None]:
    last = after
    waited = 0.0
    while True:
        channel = broadcaster.channel(run_id)
        if channel is not None:  # live here: the store, then the channel
            for stored in await store.events(run_id, from_seq=last + 1):
                yield stored.to_event()
                last = stored.seq
            async for event in channel.listen():
                if event.seq > last:
                    yield event
                    last = event.seq
            for stored in await store.events(run_id, from_seq=last + 1):
                yield stored.to_event()  # written by another writer after the launch
                last = stored.seq
            return
        if changed is not None:
            changed.clear()  # before reading: a change from now on wakes the wait below
        record = await store.get_run(run_id)  # its status before its events: none missed
        for stored in await store.events(run_id, from_seq=last + 1):
            yield stored.to_event()
            last = stored.seq
        if record.status not in LIVE_STATES:
            return
        if changed is None:  # live in another process (or starting here)
            await asyncio.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        else:
            started = asyncio.get_running_loop().time()
            await changed.wait(NOTIFIED_POLL_SECONDS)
            waited += asyncio.get_running_loop().time() - started
        if waited >= INTERRUPTED_CHECK_SECONDS and record.status == "running":
            waited = 0.0  # its process may have died
            await store.find_interrupted()


async def sse(events: AsyncGenerator[Event, None]) -> AsyncIterator[str]:
    """Frames for `events`, with a comment every KEEPALIVE_SECONDS of silence so proxies
    keep the connection open."""
    pending: asyncio.Task[Event | None] | None = None
    try:
        yield "retry: 2000\n\n"
        while True:
            if pending is None:
                pending = asyncio.create_task(_next(events))
            done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
            if not done:
                yield ": keepalive\n\n"
                continue
            event, pending = pending.result(), None
            if event is None:
                return
            yield frame(event)
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        await events.aclose()


async def _next(events: AsyncGenerator[Event, None]) -> Event | None:
    try:
        return await anext(events)
    except StopAsyncIteration:
        return None
