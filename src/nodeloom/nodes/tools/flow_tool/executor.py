"""Flow Tool: build an Agno Function whose call runs the saved flow as a child run of the
calling agent's run. The tool streams the child's node events as Agno custom events (the
Agent turns them into `ToolCallProgress` agent events, nested under the tool call), then
returns the child's result as text."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from agno.run.agent import CustomEvent
from agno.tools.function import Function

from nodeloom.errors import NodeError
from nodeloom.plugins.contract import BuildContext, FlowRunner, ToolsResult, calling_node

# The child's events shown under the tool call (not its tokens: the result carries them).
SHOWN = frozenset({"started", "completed", "error", "waiting", "run_completed", "run_failed"})


class ChildProgress(CustomEvent):
    """A child run's event, on its way through the agent's stream. Agno adds a custom
    event's text to the tool's result: this one has none."""

    def __str__(self) -> str:
        return ""


class FlowToolExecutor:
    node_type = "flow-tool"

    async def build(self, data: dict[str, Any], context: BuildContext) -> ToolsResult:
        runner = context.services.flows
        if runner is None:
            raise NodeError(
                f"'{context.node_name}' ({context.node_id}) offers a saved flow as a tool, "
                "which needs a recorded run: run the flow with `nodeloom serve` or "
                "`nodeloom run` (a run store), not with Flow.run()",
                code="subflows_unavailable",
                retryable=False,
            )
        ref = str(data.get("flow") or "")
        version = data.get("version")
        saved = await runner.find(ref, version)
        name = data.get("tool_name") or saved.tool_name
        description = (
            data.get("description") or saved.description or f"Runs the flow '{saved.name}'."
        )
        call = _caller(runner, saved.flow_id, version, context.node_id, name)
        function = Function(
            name=name,
            description=description,
            parameters=dict(saved.input_schema),
            entrypoint=call,
            skip_entrypoint_processing=True,
        )
        return ToolsResult(tools=[function], names=[name], source=f"flow: {saved.name}")


def _caller(
    runner: FlowRunner, flow_id: str, version: int | None, node_id: str, name: str
) -> Callable[..., AsyncIterator[Any]]:
    async def call(**arguments: Any) -> AsyncIterator[Any]:
        trigger = {k: v for k, v in arguments.items() if not k.startswith("_agno_")}
        caller = calling_node.get()
        if caller is None:
            yield f"the tool {name} can only be called by an Agent node"
            return
        events: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(
            runner.run_child(
                flow_id,
                trigger=trigger,
                parent_run_id=caller.run_id,
                parent_node=node_id,
                version=version,
                on_event=events.put_nowait,
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
                if event.event_type in SHOWN:
                    yield ChildProgress(nodeloom=_shown(event, name))
            child = task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if child.ok:
            yield _text(child.result)
        else:
            message = (child.error or {}).get("message", "no error given")
            yield f"the flow '{child.flow.name}' ended {child.status}: {message}"

    return call


def _shown(event: Any, tool: str) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "tool": tool,
        "child_run_id": event.run_id,
        "child_event": event.event_type,
        "node_name": event.node_name,
        "node_type": event.node_type,
    }
    data = event.data or {}
    if isinstance(data.get("error"), Mapping):
        shown["error"] = data["error"].get("message")
    return shown


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("text", "response", "message"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False, default=str)


executor = FlowToolExecutor()
