"""Keeping credential values out of what a run reports.

A run's `Redactor` learns each credential value as `$credentials.name` resolves it;
`RedactingSink` and `RedactingCheckpoints` replace those values by "***" inside every
string (keys included) of what they pass on, so no sink, run store or API response sees
them. A value is known only once it is used, and nothing is redacted before.

Streamed tokens are masked over the stream, not token by token: `TokenStreams` holds back
the end of a node's stream while it could be the start of a secret, so a value split
across two `progress` tokens is masked too.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nodeloom.engine.events import EventSink
from nodeloom.plugins.contract import Event

if TYPE_CHECKING:
    from nodeloom.engine.checkpoint import Checkpoints, Ticket
    from nodeloom.engine.topology import PlannedNode

MASK = "***"


class Redactor:
    """The secret values of one run (longest first, so a value containing another is
    masked whole)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: tuple[str, ...] = ()  # a tuple: no list to make for a run that has none

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, value: str) -> None:
        if value and value not in self.values:
            self.values = tuple(sorted((*self.values, value), key=len, reverse=True))

    def redact(self, value: Any) -> Any:
        """`value` with every known secret replaced by "***" (a copy if anything changed)."""
        if not self.values:
            return value
        return self._redact(value)

    def _redact(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.values:
                if secret in value:
                    value = value.replace(secret, MASK)
            return value
        if isinstance(value, Mapping):
            return {self._redact(k): self._redact(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._redact(item) for item in value]
        return value


class TokenStreams:
    """The `progress` tokens of each node, with the run's secrets masked across token
    boundaries. `release` says which events to emit for one the run emits: a token whose
    end could begin a secret is held back (all or part of it) until the next token of the
    node shows whether it does, or until the node's next other event."""

    __slots__ = ("held", "redactor")

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.held: dict[str | None, str] = {}  # node id -> the text held back

    def release(
        self, event_type: str, data: dict[str, Any] | None, node_id: str | None
    ) -> list[tuple[str, dict[str, Any] | None]]:
        if not self.redactor and not self.held:
            return [(event_type, data)]
        token = data.get("token") if event_type == "progress" and data is not None else None
        if data is not None and isinstance(token, str):
            text = self.redactor.redact(self.held.pop(node_id, "") + token)
            keep = self._open_end(text)
            if keep:
                self.held[node_id] = text[-keep:]
                text = text[:-keep]
            return [(event_type, {**data, "token": text})] if text else []
        flushed: list[tuple[str, dict[str, Any] | None]] = []
        for held_id in [node_id] if node_id is not None else list(self.held):
            if held_id in self.held:
                flushed.append(("progress", {"token": self.held.pop(held_id)}))
        return [*flushed, (event_type, data)]

    def _open_end(self, text: str) -> int:
        """The length of the longest end of `text` that begins a secret (0: none)."""
        longest = min(len(text), max((len(s) for s in self.redactor.values), default=1) - 1)
        for length in range(longest, 0, -1):
            end = text[-length:]
            if any(secret.startswith(end) for secret in self.redactor.values):
                return length
        return 0


class RedactingSink:
    """Passes events on to `sink` with the run's secrets masked."""

    __slots__ = ("redactor", "sink")

    def __init__(self, sink: EventSink, redactor: Redactor) -> None:
        self.sink = sink
        self.redactor = redactor

    def emit(self, event: Event) -> None:
        if self.redactor.values and event.data is not None:
            event = dataclasses.replace(event, data=self.redactor.redact(event.data))
        self.sink.emit(event)


def mask_secret_parameters(node: PlannedNode, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The rendered parameters as recorded: a secret-capable parameter (a webhook's
    secret, a header set) is masked whole, whatever it holds, credential or inline text."""
    secret = _secret_parameters(node.definition)
    if not secret or secret.isdisjoint(data):
        return data
    return {key: MASK if key in secret and value else value for key, value in data.items()}


@functools.cache
def _secret_parameters(definition: Any) -> frozenset[str]:
    return frozenset(p.id for p in definition.parameters if getattr(p, "secret", False))


class RedactingCheckpoints:
    """Passes checkpoints on to `checkpoints` (a run store) with the run's secrets masked
    in the inputs, parameters, outputs, errors and state recorded (and in what the input
    hash is taken of). A resumed run replays the masked
    outputs of executions on record."""

    __slots__ = ("checkpoints", "redactor")

    def __init__(self, checkpoints: Checkpoints, redactor: Redactor) -> None:
        self.checkpoints = checkpoints
        self.redactor = redactor

    def begin(
        self,
        node_id: str,
        activation: str,
        node: PlannedNode,
        inputs: Mapping[str, Any],
        data: Mapping[str, Any],
    ) -> Ticket:
        # The digest and the recorded parameters are of the masked values: a resumed run
        # replays masked outputs, so downstream of a credential it receives "***" and must
        # hash alike; and a stored digest of a secret could be tested against guesses.
        redact = self.redactor.redact
        data = mask_secret_parameters(node, data)
        return self.checkpoints.begin(node_id, activation, node, redact(inputs), redact(data))

    def started(self, ticket: Ticket, node: PlannedNode, inputs: Mapping[str, Any]) -> None:
        self.checkpoints.started(ticket, node, self.redactor.redact(inputs))

    def waiting(self, ticket: Ticket) -> None:
        self.checkpoints.waiting(ticket)

    def resumed(self, ticket: Ticket) -> None:
        self.checkpoints.resumed(ticket)

    def finished(
        self,
        ticket: Ticket,
        status: str,
        outputs: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        attempts: int,
        usage: Mapping[str, int] | None,
        state_delta: Mapping[str, Any] | None,
    ) -> None:
        redact = self.redactor.redact
        self.checkpoints.finished(
            ticket, status, redact(outputs), redact(error), attempts, usage, redact(state_delta)
        )

    async def barrier(self) -> None:
        await self.checkpoints.barrier()
