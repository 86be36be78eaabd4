"""Subagents as tools (seed 002's nested agent-tool trees).

A subagent is a tool of its parent named `subagent_<name>_<node id>`, taking the task
as `input`. Calling it runs the subagent (with its own subagents as its tools) and answers
with its reply. Each call is logged on the workflow node that is running, as the
original's runtime events: `subagent_call_start`, then `subagent_call_end` or
`subagent_call_error`, with the call's id, its parent call and its depth in the tree.

The compiled tree is shared by runs; what belongs to one execution (the logs to emit, the
tokens the subagents spent, the call being made) travels in context variables, which the
running node sets and which every nested call sees.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from nodeloom.formats.workflow.log import log_event
from nodeloom.models.llm import usage_of
from nodeloom.plugins.contract import AgentResult, Event

PROMPT_SUMMARY_CHARS = 280


@dataclass
class SubagentCalls:
    """The subagent calls of one execution of a workflow agent (`root` is its node id)."""

    root: str
    pending: list[Event] = field(default_factory=list)
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    )
    count: int = 0

    def drain(self) -> list[Event]:
        events, self.pending = self.pending, []
        return events

    def log(self, payload: dict[str, Any]) -> None:
        details = {
            "subagent_node_id": payload["subagentNodeId"],
            "subagent_name": payload["subagentName"],
            "call_id": payload["callId"],
            "parent_call_id": payload.get("parentCallId"),
            "depth": payload["depth"],
        }
        if "message" in payload:
            details["message"] = payload["message"]
        self.pending.append(log_event(payload["type"], json.dumps(payload), **details))

    def add_usage(self, output: Any) -> None:
        for key, value in usage_of(output).items():
            self.usage[key] += value


CALLS: ContextVar[SubagentCalls | None] = ContextVar("workflow_subagent_calls", default=None)
CURRENT_CALL: ContextVar[tuple[str, int] | None] = ContextVar(
    "workflow_subagent_call", default=None
)


def tool_name(name: str, node_id: str) -> str:
    """`subagent_<name slug>_<node id slug>`, as the original names the tool."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_") or "agent"
    return f"subagent_{slug}_{re.sub(r'[^a-zA-Z0-9_]+', '_', node_id)}".lower()


def subagent_tool(child: AgentResult) -> Any:
    """The Agno tool that runs `child` (a compiled Workflow Agent) on a task."""
    from agno.tools.function import Function

    summary = child.summary
    name, node_id = str(summary.get("node")), str(summary.get("node_id"))

    async def delegate(input: str) -> str:
        """Give the subagent a task and get its answer.

        Args:
            input: The task for the subagent, with everything it needs to know.
        """
        calls = CALLS.get()
        if calls is None:  # outside a workflow run: no logs to keep
            output = await child.agent.arun(input)
            return _text(output.content)
        return await _call(calls, child, name, node_id, input)

    return Function(
        name=tool_name(name, node_id),
        description=_description(summary),
        entrypoint=delegate,
    )


async def _call(
    calls: SubagentCalls, child: AgentResult, name: str, node_id: str, task: str
) -> str:
    parent = CURRENT_CALL.get()
    calls.count += 1
    payload: dict[str, Any] = {
        "type": "subagent_call_start",
        "parentNodeId": calls.root,
        "subagentNodeId": node_id,
        "subagentName": name,
        "callId": f"{tool_name(name, node_id)}_{calls.count}",
        "depth": parent[1] + 1 if parent else 1,
    }
    if parent:
        payload["parentCallId"] = parent[0]
    calls.log(payload)
    token = CURRENT_CALL.set((payload["callId"], payload["depth"]))
    try:
        output = await child.agent.arun(task)
    except Exception as exc:
        return _failed(calls, payload, name, f"{type(exc).__name__}: {exc}")
    finally:
        CURRENT_CALL.reset(token)
    calls.add_usage(output)
    if getattr(getattr(output, "status", None), "value", None) == "ERROR":
        return _failed(calls, payload, name, _text(output.content) or "the subagent failed")
    calls.log({**payload, "type": "subagent_call_end"})
    return _text(output.content)


def _failed(calls: SubagentCalls, payload: dict[str, Any], name: str, message: str) -> str:
    """Log the failure; the parent reads it as the tool's answer and may try otherwise."""
    calls.log({**payload, "type": "subagent_call_error", "message": message})
    return f"The subagent {name} failed: {message}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _description(summary: dict[str, Any]) -> str:
    prompt = " ".join(str(summary.get("system_prompt") or "").split())
    if len(prompt) > PROMPT_SUMMARY_CHARS:
        prompt = prompt[:PROMPT_SUMMARY_CHARS].rstrip() + "…"
    tools = ", ".join(t for t in summary.get("tools", []) if not t.startswith("subagent_"))
    nested = ", ".join(str(m.get("node")) for m in summary.get("members", []))
    return (
        f"Delegates work to subagent {summary.get('node')}. System prompt: "
        f"{prompt or 'No system prompt provided.'} Available tools: {tools or 'None'}. "
        f"Nested subagents: {nested or 'None'}."
    )
