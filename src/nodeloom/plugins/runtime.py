"""A node at run time: what `execute()` receives, yields and returns.

`execute(data, inputs, context)` gets the node's resolved parameters, the `DataValue`s on
its input ports and a `FlowContext` (implemented by the engine). It returns an
`ExecutionResult`, or is an async generator that yields `Event`s and finally one
`ExecutionResult`. A node that needs a person asks with an `InputRequest`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from nodeloom.plugins.build import BuildContext, StructuralResult
from nodeloom.plugins.services import Services
from nodeloom.values import DataValue


@dataclass(slots=True)
class Event:
    """Something that happened in a run: a node event or a run event.

    Executors yield `Event("progress", {...})` (or `agent_event`); the engine fills in
    `run_id`, `seq`, the node fields and `timestamp` before anyone sees it. The types
    (nodeloom.engine.events; docs/semantics.md):
    Node event types: started, progress, completed, error, skipped, agent_event, waiting,
    resumed, replay_mismatch.
    Run event types: run_started, run_resumed, run_completed, run_failed, run_cancelled,
    run_paused.
    """

    event_type: str
    data: dict[str, Any] | None = None
    node_id: str | None = None
    node_name: str | None = None
    node_type: str | None = None
    run_id: str = ""
    seq: int = 0
    timestamp: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "event",
            "seq": self.seq,
            "run_id": self.run_id,
            "event_type": self.event_type,
            "node_id": self.node_id,
            "node_name": self.node_name,
            "node_type": self.node_type,
            "data": self.data or {},
            "timestamp": self.timestamp,
        }


NodeEvent = Event  # the seeds' name for the same thing


class EventSink(Protocol):
    """Where a run's events go (the engine emits to it; the CLI, the server, a recorder or
    a tracer receives them)."""

    def emit(self, event: Event) -> None: ...


@dataclass(slots=True)
class ExecutionResult:
    """Values on output ports. A missing port did not fire: its edges are dead.

    Values may be plain JSON or `DataValue`s; `events` are emitted after the result.
    `usage` reports tokens spent ({"prompt_tokens", "completion_tokens", "total_tokens"});
    the engine adds it to the `completed` event and sums it over the run.
    """

    outputs: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    usage: dict[str, int] | None = None


# -- human input ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputRequest:
    """What a waiting node asks a person for.

    `kind` is `approval` (an approve/reject decision with a note) or `input` (free text,
    or the form `fields`: [{"name", "label"?, "type"?: string|number|boolean, "required"?}]).
    `value` is what the person is asked about (shown beside the question).

    `announce`, if given, is awaited when the node really starts to wait: not when an
    answer was given ahead of time, nor when a resumed run finds the node already
    waiting on record. It tells the person (Send and Wait's email), once.

    `wake_at` (seconds since the epoch), if given, is a deadline: when it passes with no
    answer, `wait_for_input` raises `TimeoutError`, whether the run is still live here or
    was paused and let go (the server's timer service resumes it then; see
    docs/automations.md). Kind `wait` is a pure timer (the Wait node): it asks nobody,
    and any answer ends it early."""

    kind: Literal["approval", "input", "wait"]
    prompt: str = ""
    fields: tuple[Mapping[str, Any], ...] = ()
    value: Any = None
    announce: Callable[[], Awaitable[None]] | None = field(default=None, compare=False)
    wake_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "prompt": self.prompt}
        if self.fields:
            data["fields"] = [dict(f) for f in self.fields]
        if self.value is not None:
            data["value"] = self.value
        if self.wake_at is not None:
            data["wake_at"] = self.wake_at
        return data


@runtime_checkable
class FlowContext(Protocol):
    """What the engine offers a running node. Implemented by the engine."""

    run_id: str
    node_id: str
    node_name: str
    node_type: str
    chat_id: str | None
    trigger: Any
    variables: Mapping[str, Any]
    state: dict[str, Any]
    services: Services
    structure: StructuralResult | None  # this node's phase-1 build result, if it has one
    build_context: BuildContext | None  # to build() again with data known only now

    def upstream(self) -> dict[str, Any]:
        """Main output of every upstream node that ran, by node name."""
        ...

    def sources(self, port: str) -> list[tuple[str, Any]]:
        """(source node name, value) for each edge into `port` that delivered, in the
        order of the edges in the graph file."""
        ...

    def evaluate(self, expression: str, extra: Mapping[str, Any] | None = None) -> Any:
        """Evaluate a `{{ ... }}` template in this node's scope, plus `extra` names."""
        ...

    def http_client(self) -> Any:
        """An httpx.AsyncClient shared by the run's nodes, closed when the run ends
        (guarded like `BuildContext.http_client`)."""
        ...

    def set_result(self, value: Any) -> None:
        """Make `value` the run's result (RunResult.result; the last call wins)."""
        ...

    async def wait_for_input(self, request: InputRequest) -> Any:
        """Pause this node until a person answers; returns the answer, already checked and
        normalised for the request's kind (see nodeloom.engine.human). Other branches go
        on meanwhile; the run is `paused` once nothing else can proceed. Raises
        `TimeoutError` when the request's `wake_at` passes first."""
        ...

    async def run_body(self, parameter: str, item: Any, loop: Mapping[str, Any]) -> Any:
        """Run the inner graph held in `parameter` (a Loop's `body`) once, with `item` as
        its entry node's spine input and `loop` as `$loop`; returns the body's result."""
        ...


# The node whose execute() is running, while an Agent's tools run (the Agent sets it):
# how a tool that starts a child run (Flow Tool) knows its parent run and node.
calling_node: ContextVar[FlowContext | None] = ContextVar("nodeloom_calling_node", default=None)


class FlowExecutor(Protocol):
    node_type: str

    def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> Any:  # Awaitable[ExecutionResult] | AsyncIterator[Event | ExecutionResult]
        ...


__all__ = [
    "Event",
    "EventSink",
    "ExecutionResult",
    "FlowContext",
    "FlowExecutor",
    "InputRequest",
    "NodeEvent",
    "calling_node",
]
