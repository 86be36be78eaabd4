"""Which state and inputs a running Ethan node works on: its frame.

The top-level graph's frame is the run's shared state (`FlowContext.state`, which becomes
`RunResult.state`) and the run's inputs (the trigger's `inputs`). A subgraph node runs its
subgraph in a frame of its own: a copy of its parent's state plus the subgraph's inputs,
merged back into the parent when the subgraph ends. Nodes inside the subgraph find that
frame by their node id, which the engine prefixes with the subgraph node's id
(`summary_step/llm`); a Loop body's prefix is no frame, so the body shares its loop's.

Bookkeeping lives under one key of the run's state, `__ethan__`, hidden from templates:
`frames` (the state and inputs of each subgraph running now, removed when it ends) and
`deadline` (the epoch second `graph.timeout` expires, when the graph has one). The key is
removed when it holds nothing, so it stays in a finished run's state only with a deadline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins.contract import FlowContext

BOOK = "__ethan__"


@dataclass(frozen=True, slots=True)
class Frame:
    key: str  # "" for the top-level graph, else "<subgraph node id>/"
    state: dict[str, Any]  # the live state dict (for the top frame: the run's state)
    inputs: dict[str, Any]
    deadline: float | None  # epoch seconds, or None

    @property
    def top(self) -> bool:
        return self.key == ""

    def view(self) -> dict[str, Any]:
        """The state as templates and conditions see it (without the bookkeeping)."""
        if BOOK in self.state:
            return {k: v for k, v in self.state.items() if k != BOOK}
        return self.state

    def replace(self, new_state: dict[str, Any]) -> None:
        """Make the state `new_state`, in place (keeping the bookkeeping)."""
        book = self.state.get(BOOK)
        self.state.clear()
        self.state.update(new_state)
        if book is not None:
            self.state[BOOK] = book

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.time()


class GraphTimeout(NodeError):
    """`graph.timeout` (or a subgraph's `timeout`) expired. Not retryable."""

    code = "graph_timeout"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def find(context: FlowContext) -> Frame:
    """The frame of the node running in `context`."""
    state = context.state
    book = state.get(BOOK) or {}
    frames: dict[str, Any] = book.get("frames") or {}
    node_id = context.node_id
    best = ""
    for key in frames:
        if node_id.startswith(key) and len(key) > len(best):
            best = key
    if best:
        entry = frames[best]
        return Frame(best, entry["state"], entry["inputs"], entry.get("deadline"))
    trigger = context.trigger if isinstance(context.trigger, dict) else {}
    inputs = trigger.get("inputs")
    return Frame("", state, inputs if isinstance(inputs, dict) else {}, book.get("deadline"))


def set_deadline(context: FlowContext, seconds: float | None) -> None:
    """Start the top-level graph's clock (the start node does)."""
    if seconds is not None:
        context.state.setdefault(BOOK, {})["deadline"] = time.time() + seconds


def enter(
    context: FlowContext,
    key: str,
    state: dict[str, Any],
    inputs: dict[str, Any],
    deadline: float | None,
) -> Frame:
    frames = context.state.setdefault(BOOK, {}).setdefault("frames", {})
    frames[key] = {"state": state, "inputs": inputs, "deadline": deadline}
    return Frame(key, state, inputs, deadline)


def leave(context: FlowContext, key: str) -> None:
    book = context.state.get(BOOK)
    if not book:
        return
    frames = book.get("frames") or {}
    frames.pop(key, None)
    if not frames:
        book.pop("frames", None)
    if not book:
        context.state.pop(BOOK, None)


def earliest(*deadlines: float | None) -> float | None:
    known = [d for d in deadlines if d is not None]
    return min(known) if known else None


__all__ = [
    "BOOK",
    "Frame",
    "GraphTimeout",
    "earliest",
    "enter",
    "find",
    "leave",
    "set_deadline",
]
