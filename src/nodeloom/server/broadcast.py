"""Live events of the runs this process executes, for any number of listeners.

A `Channel` is the event sink of one launch of a run (a start, a resume, a re-run). It
keeps every event of that launch and hands each to its listeners as it is emitted, before
the recorder has written it to the store (the store lags the live stream). A listener
that subscribes late first receives everything the launch emitted so far, so together
with the store (which holds everything before the launch) nothing is missed. The channel
closes when the launch has ended and its events are all written.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from nodeloom.plugins.contract import Event


class Channel:
    """The sink of one launch. It joins the broadcaster under the run's id given, or else
    under the run id of its first event (a re-run's id is only known then)."""

    def __init__(self, broadcaster: Broadcaster, run_id: str | None = None) -> None:
        self._broadcaster = broadcaster
        self.run_id = run_id
        self.events: list[Event] = []
        self.closed = False
        self.first: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._listeners: list[asyncio.Queue[Event | None]] = []
        if run_id is not None:
            broadcaster._join(run_id, self)

    def emit(self, event: Event) -> None:
        if self.closed:
            return
        if self.run_id is None:
            self.run_id = event.run_id
            self._broadcaster._join(event.run_id, self)
        self.events.append(event)
        for queue in self._listeners:
            queue.put_nowait(event)
        if not self.first.done():
            self.first.set_result(event)

    def close(self) -> None:
        """The launch ended and its events are in the store: end every listener."""
        if self.closed:
            return
        self.closed = True
        if self.run_id is not None:
            self._broadcaster._leave(self.run_id, self)
        for queue in self._listeners:
            queue.put_nowait(None)
        self._listeners.clear()
        if not self.first.done():
            self.first.cancel()

    async def listen(self) -> AsyncIterator[Event]:
        """Every event of the launch, from its first, until the channel closes."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        for event in self.events:
            queue.put_nowait(event)
        if self.closed:
            queue.put_nowait(None)
        else:
            self._listeners.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if queue in self._listeners:
                self._listeners.remove(queue)


class Broadcaster:
    """The open channels, by run id."""

    def __init__(self) -> None:
        self._channels: dict[str, Channel] = {}

    def channel(self, run_id: str) -> Channel | None:
        """The run's channel if it is live in this process."""
        return self._channels.get(run_id)

    def _join(self, run_id: str, channel: Channel) -> None:
        self._channels[run_id] = channel

    def _leave(self, run_id: str, channel: Channel) -> None:
        if self._channels.get(run_id) is channel:
            del self._channels[run_id]
