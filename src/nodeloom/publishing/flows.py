"""Which saved flows are MCP tools, and running one for a tool call.

Every saved flow that is not deleted is published, at its latest version (the store has no
"published" flag: saving a flow publishes it; deleting it withdraws it), unless the
operator names the flows (`nodeloom mcp serve FLOW...`). A tool's name is its flow's name
in snake_case (a clash gets `_2`, `_3`...), its input schema its trigger's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nodeloom.engine.events import CallbackSink
from nodeloom.errors import GraphError, NodeError
from nodeloom.plugins.contract import Event
from nodeloom.plugins.subflows import SavedFlow
from nodeloom.runs import RunService
from nodeloom.runs.subflows import child_result

log = logging.getLogger("nodeloom.publishing")

# The events a tool call reports as progress (one notification each).
PROGRESS_EVENTS = frozenset({"completed", "error", "waiting"})


@dataclass(frozen=True, slots=True)
class Outcome:
    """A tool call's answer: the run's result, or why it failed."""

    run_id: str | None
    status: str
    result: Any = None
    error: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "completed"


class PublishedFlows:
    """The saved flows a RunService's store publishes as tools (all, or `names`)."""

    def __init__(self, runs: RunService, names: Sequence[str] = ()) -> None:
        self.runs = runs
        self.names = tuple(names)

    async def tools(self) -> dict[str, SavedFlow]:
        """Tool name -> the flow it runs (each flow's latest version)."""
        refs = self.names or [flow.id for flow in await self.runs.store.list_flows()]
        found: dict[str, SavedFlow] = {}
        for ref in refs:
            try:
                saved = await self.runs.subflows.find(ref)
            except (NodeError, GraphError) as exc:
                if self.names:  # named by the operator: say so
                    raise
                log.warning("flow %s is not offered over MCP: %s", ref, exc)
                continue
            name, n = saved.tool_name, 2
            while name in found:
                name, n = f"{saved.tool_name}_{n}", n + 1
            found[name] = saved
        return found

    async def call(
        self, saved: SavedFlow, arguments: Mapping[str, Any]
    ) -> AsyncIterator[Event | Outcome]:
        """Run `saved` once with `arguments` as its trigger (a recorded run): its node
        events as they happen (those of PROGRESS_EVENTS), then the Outcome."""
        _, flow = await self.runs.subflows.load(saved.flow_id, saved.version)
        events: asyncio.Queue[Event] = asyncio.Queue()
        task = asyncio.create_task(
            self.runs.start(
                flow,
                trigger=dict(arguments),
                sink=CallbackSink(events.put_nowait),
                flow_id=saved.flow_id,
                flow_version=saved.version,
            )
        )
        try:
            while not task.done() or not events.empty():
                getter = asyncio.ensure_future(events.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    continue
                event = getter.result()
                if event.event_type in PROGRESS_EVENTS and event.node_id is not None:
                    yield event
            try:
                result = task.result()
            except GraphError as exc:  # the trigger does not fit the flow
                message = "; ".join(issue.message for issue in exc.issues)
                yield Outcome(
                    None, "invalid", error={"code": "invalid_request", "message": message}
                )
                return
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        yield Outcome(result.run_id, result.status.value, child_result(flow, result), result.error)
