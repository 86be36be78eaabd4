"""Runs that start runs: what a node (Execute Flow, Flow Tool) may ask of the run
service, without knowing it. The service is `Services.flows` (None in an unrecorded run:
a child run needs a run store to be recorded in); `nodeloom.runs.subflows` implements it.

A child run is a run of a saved flow, recorded like any other, that names the run and
node that started it (`parent_run_id`, `parent_node`). It runs in the process of its
parent, in the same store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SavedFlow:
    """A saved flow's version as a callable thing: its id, name, version, the JSON schema
    of the trigger it takes (from its trigger node), and its description."""

    flow_id: str
    name: str
    version: int
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tool_name(self) -> str:
        """The flow's name as a tool name: 'Lookup order!' -> 'lookup_order'."""
        text = "_".join(re.findall(r"[A-Za-z0-9]+", self.name)).lower() or "flow"
        return ("flow_" + text if text[0].isdigit() else text)[:64]


@dataclass(frozen=True, slots=True)
class ChildRun:
    """How a child run ended: its id, status (`completed`, `failed`, `cancelled`,
    `paused`), its result (the value a node set, else its end node's main output) and
    its error."""

    run_id: str
    flow: SavedFlow
    status: str
    result: Any = None
    error: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "completed"


class FlowRunner(Protocol):
    """Runs saved flows as child runs (`Services.flows`)."""

    async def find(self, flow: str, version: int | None = None) -> SavedFlow:
        """The saved flow `flow` (an id, else a name) at `version` (default the latest).
        Raises NodeError (`unknown_flow`, listing the saved flows) if there is none."""
        ...

    async def run_child(
        self,
        flow: str,
        *,
        trigger: Mapping[str, Any],
        parent_run_id: str,
        parent_node: str,
        version: int | None = None,
        max_depth: int = 10,
        on_event: Callable[[Any], None] | None = None,
    ) -> ChildRun:
        """Run `flow` once with `trigger`, recorded as a child of `parent_run_id`'s node
        `parent_node`, in this process; `on_event` sees its events (`Event`s) as they
        happen.
        Raises NodeError (`subflow_depth`, naming the chain of flows) when the child
        would be nested deeper than `max_depth` runs."""
        ...


__all__ = ["ChildRun", "FlowRunner", "SavedFlow"]
