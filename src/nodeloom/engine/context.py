"""What a run is given and what it accumulates, shared by the run and the inner runs of
its Loop bodies.

- `RunSettings`: the run's limits.
- `RunContext` (frozen): who and what the run is for (ids, trigger, variables), its
  settings and services, where its events go (`Emitter`), the credential values to mask,
  its checkpoints and the human input it may wait for. Fixed when the run starts.
- `RunState`: what the run accumulates as it goes (usage, shared state, result, steps, the
  phase-1 build, the HTTP client of its nodes).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from nodeloom.engine.events import EventSink, NullSink
from nodeloom.engine.human import HumanInput
from nodeloom.engine.redaction import RedactingSink, Redactor, TokenStreams
from nodeloom.plugins.contract import Event, Services

if TYPE_CHECKING:
    import httpx

    from nodeloom.engine.build import Built
    from nodeloom.engine.checkpoint import Checkpoints, Continuation


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Limits of one run. `max_steps` counts node executions, Loop bodies included."""

    max_concurrency: int = 1000
    max_steps: int = 1000
    timeout: float | None = None


class Emitter:
    """Numbers a run's events and passes them to its sink with the run's credential values
    masked (`RedactingSink`); streamed tokens are held back while they could be the start
    of a secret (`TokenStreams`). Both are made when the run resolves its first secret:
    until then every event goes to the sink as it is."""

    __slots__ = ("plain", "redactor", "run_id", "seq", "sink", "tokens")

    def __init__(self, run_id: str, sink: EventSink, redactor: Redactor, seq: int = 0) -> None:
        self.run_id = run_id
        self.redactor = redactor
        self.plain = sink  # taken directly while there is nothing to mask
        self.sink: EventSink | None = None  # RedactingSink(plain), from the first secret on
        self.tokens: TokenStreams | None = None  # from the first secret on
        self.seq = seq  # the last event's number (a resumed run goes on from its record)

    def emit(
        self,
        event_type: str,
        data: dict[str, Any] | None,
        node_id: str | None = None,
        node_name: str | None = None,
        node_type: str | None = None,
    ) -> None:
        tokens = self.tokens
        if tokens is None:
            if not self.redactor.values:  # nothing to mask or hold back
                self.seq += 1
                self.plain.emit(
                    Event(
                        event_type,
                        data,
                        node_id,
                        node_name,
                        node_type,
                        self.run_id,
                        self.seq,
                        time.time(),
                    )
                )
                return
            tokens = self.tokens = TokenStreams(self.redactor)
            self.sink = RedactingSink(self.plain, self.redactor)
        sink = self.sink
        assert sink is not None
        for kind, released in tokens.release(event_type, data, node_id):
            self.seq += 1
            sink.emit(
                Event(
                    kind,
                    released,
                    node_id,
                    node_name,
                    node_type,
                    self.run_id,
                    self.seq,
                    time.time(),
                )
            )

    def mute(self) -> None:
        """Let go of the run: nothing it emits from now on is passed on."""
        self.plain = NullSink()
        if self.sink is not None:
            self.sink = self.plain


class RunContext(NamedTuple):
    """What a run is given, fixed when it starts. Immutable and typed; a named tuple
    rather than a frozen dataclass because one is made per run: it is built at C speed
    (a frozen dataclass sets each field through `object.__setattr__`, ~1 µs a run)."""

    run_id: str
    chat_id: str | None
    trigger: Any
    variables: Mapping[str, Any]
    settings: RunSettings
    services: Services | None
    events: Emitter
    redactor: Redactor  # the credential values this run has resolved
    checkpoints: Checkpoints | None = None  # set for recorded runs
    continuation: Continuation | None = None  # set for a resumed recorded run
    human: HumanInput | None = None  # set for plans with nodes that may wait


class RunState:
    """What a run accumulates: token usage, the shared state nodes read and write, the
    run's result, node executions so far, the phase-1 build and the nodes' HTTP client."""

    __slots__ = ("built", "http", "result", "shared", "steps", "usage")

    def __init__(self) -> None:
        self.usage: dict[str, int] = {}
        self.shared: dict[str, Any] = {}  # FlowContext.state
        self.result: Any = None  # RunResult.result: whatever a node set
        self.steps = 0
        self.built: Built | None = None  # phase 1's result, once it ran
        self.http: httpx.AsyncClient | None = None

    def add_usage(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    def http_client(self) -> httpx.AsyncClient:
        if self.http is None:  # guarded: see nodeloom.models.endpoints
            from nodeloom.models.endpoints import model_http_client

            self.http = model_http_client()
        return self.http

    async def aclose(self) -> None:
        if self.http is not None:
            client, self.http = self.http, None
            await client.aclose()
