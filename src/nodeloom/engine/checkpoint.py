"""What the engine tells a run recorder about each node execution, and what a recorder
may answer from an earlier record of the same run (resume after a crash or a pause).

The engine calls, for every node execution of a recorded run:

    ticket = checkpoints.begin(node_id, activation, node, inputs, data)   # before anything else
    ...ticket.prior says whether this execution is already on record (matched by its
    position: node id and activation), ticket.mismatch what differs from that record...
    checkpoints.started(ticket, inputs)                       # it will run
    await checkpoints.barrier()                               # before an external node runs
    checkpoints.waiting(ticket) / checkpoints.resumed(ticket)   # human input
    checkpoints.finished(ticket, status, outputs, error, attempts, usage, state_delta)

`begin` never blocks; a recorder writes in the background (group commit) and `barrier()`
waits until everything handed over so far is durable. See docs/durable-runs.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from nodeloom.values import json_default, json_encoder

if TYPE_CHECKING:
    from nodeloom.engine.topology import PlannedNode


@dataclass(slots=True)
class Prior:
    """An earlier record of this node execution in the same run."""

    status: str  # completed | failed | started | waiting
    outputs: dict[str, Any] | None = None
    usage: dict[str, int] | None = None
    state_delta: dict[str, Any] | None = None
    input_hash: str | None = None
    inputs: dict[str, Any] | None = None  # as recorded (redacted)
    parameters: dict[str, Any] | None = None  # as recorded (redacted)

    @property
    def done(self) -> bool:
        """It finished with outputs (a handled failure included): replay, do not run."""
        return self.status in ("completed", "failed") and self.outputs is not None


@dataclass(slots=True)
class Ticket:
    """One node execution of a recorded run."""

    node_id: str
    execution: int
    input_hash: str | None
    side_effects: str
    prior: Prior | None = None
    activation: str = ""
    parameters: dict[str, Any] | None = None  # rendered, redacted: recorded with it
    mismatch: dict[str, Any] | None = None  # how it differs from `prior` (see `mismatch`)


class Checkpoints(Protocol):
    """Where a recorded run's node executions go. An implementation may also have
    `woken = True`: a timer service wakes the run's deadlines while it is paused (the
    server), so a Wait pauses the run rather than holding it in the process."""

    def begin(
        self,
        node_id: str,
        activation: str,
        node: PlannedNode,
        inputs: Mapping[str, Any],
        data: Mapping[str, Any],
    ) -> Ticket: ...

    def started(self, ticket: Ticket, node: PlannedNode, inputs: Mapping[str, Any]) -> None: ...

    def waiting(self, ticket: Ticket) -> None: ...

    def resumed(self, ticket: Ticket) -> None: ...

    def finished(
        self,
        ticket: Ticket,
        status: str,
        outputs: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        attempts: int,
        usage: Mapping[str, int] | None,
        state_delta: Mapping[str, Any] | None,
    ) -> None: ...

    async def barrier(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Continuation:
    """A recorded run taken up again: its events go on after `last_seq`; `reason` is what
    stopped it (paused, interrupted). `deadlines`: node id -> the wake time (epoch
    seconds) it waited for when the run paused; a node that waits again keeps it, rather
    than counting its timeout again from now."""

    last_seq: int
    reason: str
    replay_external: bool = False
    deadlines: Mapping[str, float] = field(default_factory=dict)


_HASHED = json_encoder(json_default, sort_keys=True)
_PLAIN = json_encoder(json_default, key_separator=": ", item_separator=", ")
_NOT_JSON = (TypeError, ValueError, RecursionError)


def input_hash(node: PlannedNode, inputs: Mapping[str, Any], data: Mapping[str, Any]) -> str | None:
    """A digest of what a node execution received: its type, spine inputs and resolved
    parameters. None if they are not JSON (the execution is then never replayed)."""
    try:
        text = _HASHED([node.type, inputs, data])
    except _NOT_JSON:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def json_safe(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """`value` as plain JSON (what a store can keep), or None if it is not JSON."""
    try:
        return json.loads(_PLAIN(value))
    except _NOT_JSON:
        return None


def mismatch(
    prior: Prior, digest: str | None, inputs: Mapping[str, Any], parameters: Mapping[str, Any]
) -> dict[str, Any] | None:
    """What differs between a recorded execution and the one at its position now (None:
    nothing). Names the input ports and parameters that differ when the record has them
    (records written before 0003 have no parameters: only the hashes are compared)."""
    if prior.input_hash is None or digest == prior.input_hash:
        return None
    found: dict[str, Any] = {"recorded_hash": prior.input_hash, "hash": digest}
    if prior.inputs is not None:
        found["inputs"] = _differing(prior.inputs, json_safe(inputs) or {})
    if prior.parameters is not None:
        found["parameters"] = _differing(prior.parameters, json_safe(parameters) or {})
    return found


def _differing(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    keys = set(recorded) | set(now)
    return sorted(k for k in keys if _text(recorded.get(k)) != _text(now.get(k)))


# -- shared state: what a node changed -------------------------------------------------------

RESULT_KEY = "$result"


def snapshot_state(state: Mapping[str, Any], result: Any) -> dict[str, str] | None:
    """The run's shared state (and result) as JSON text per key, to tell what a node
    changes (in place or not). None when there is nothing to compare."""
    if not state and result is None:
        return None
    snapshot = {key: _text(value) for key, value in state.items()}
    if result is not None:
        snapshot[RESULT_KEY] = _text(result)
    return snapshot


def state_delta(
    before: dict[str, str] | None, state: Mapping[str, Any], result: Any
) -> dict[str, Any] | None:
    """What changed since `before`: {"set": {key: value}, "unset": [keys], "result": ...}."""
    before = before or {}
    changed = {k: v for k, v in state.items() if before.get(k) != _text(v)}
    unset = [k for k in before if k != RESULT_KEY and k not in state]
    delta: dict[str, Any] = {}
    if changed:
        delta["set"] = changed
    if unset:
        delta["unset"] = unset
    if result is not None and before.get(RESULT_KEY) != _text(result):
        delta["result"] = result
    return delta or None


def apply_delta(delta: Mapping[str, Any], state: dict[str, Any]) -> Any:
    """Apply a recorded delta to the state; returns the result it set (or None)."""
    state.update(delta.get("set") or {})
    for key in delta.get("unset") or ():
        state.pop(key, None)
    return delta.get("result")


def _text(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=json_default)
    except (TypeError, ValueError):
        return repr(value)
