"""How one node execution ended. Every outcome lands in `FlowRun.commit`, the one place
that records it, reports it, keeps its outputs and settles the node's outgoing edges.

- `Done`: the node produced outputs (or its pinned outputs were taken);
- `Failed`: it raised, after its retries; its `on_error` decides what follows;
- `Replayed`: the record of a resumed run shows it finished: its outputs are taken again;
- `Skipped`: planning found no value arrived on one of its inputs (`plan.skip_reason`);
- `Cancelled`: the run was cancelled, or failed elsewhere, while it ran.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from nodeloom.engine.checkpoint import Prior, Ticket


class Record(NamedTuple):
    """A recorded execution's checkpoint, and the run's state before it ran (to record
    what it changed)."""

    ticket: Ticket
    before: dict[str, str] | None


class Done(NamedTuple):
    outputs: dict[str, Any]
    usage: dict[str, int] | None
    started: float  # time.perf_counter() when it started
    delivery: str = ""  # an each-node: the position of the delivery it ran for
    attempts: int = 1
    record: Record | None = None
    pinned: bool = False


class Failed(NamedTuple):
    error: Exception  # its `attempts` attribute, when set, counts the attempts made
    attempts: int
    started: float
    delivery: str = ""
    record: Record | None = None


class Replayed(NamedTuple):
    prior: Prior
    delivery: str = ""


class Skipped(NamedTuple):
    reason: str


class Cancelled(NamedTuple):
    """Nothing is reported for it (`run_cancelled` or the run's failure says why); a
    recorded execution stays on record as started, so a resumed run takes it up again."""


Outcome = Done | Failed | Replayed | Skipped | Cancelled
CANCELLED = Cancelled()
