"""Where events go. The engine emits to a sink; the CLI, the server and tests adapt them.

A sink is any object with `emit(event)`. `emit` is called synchronously, in order, from
the engine's task: a sink must not block. `QueueSink` hands events to an async consumer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nodeloom.plugins.contract import Event, EventSink

NODE_EVENT_TYPES = (
    "started",
    "progress",
    "completed",
    "error",
    "skipped",
    "agent_event",
    "waiting",
    "resumed",
    "replay_mismatch",
)
RUN_EVENT_TYPES = (
    "run_started",
    "run_resumed",
    "run_completed",
    "run_failed",
    "run_cancelled",
    "run_paused",
)
EXECUTOR_EVENT_TYPES = frozenset({"progress", "agent_event"})


class NullSink:
    """Drops every event (benchmarks, fire-and-forget runs)."""

    def emit(self, event: Event) -> None:
        pass


class ListSink:
    """Keeps every event in a list (tests, small runs)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


class CallbackSink:
    def __init__(self, callback: Callable[[Event], None]) -> None:
        self.emit = callback  # type: ignore[method-assign]


class QueueSink:
    """Puts events on an unbounded asyncio queue for an async consumer."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue()

    def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)


class FanoutSink:
    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = sinks

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink.emit(event)
