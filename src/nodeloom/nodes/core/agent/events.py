"""Agno's run events as nodeloom events: the agent's own tokens become `progress`
`{"token"}` (as LLM Completion's); tool calls, sub-agent runs and the events of a Flow
Tool's child run (`ToolCallProgress`) become `agent_event`s."""

from __future__ import annotations

from typing import Any

from nodeloom.knowledge.retrieval import hits_in_tool_result
from nodeloom.plugins.contract import Event

RESULT_PREVIEW = 2000


def map_event(event: Any, root: str) -> Event | None:
    kind = getattr(event, "event", "")
    kind = kind[4:] if kind.startswith("Team") else kind
    agent = getattr(event, "agent_name", None) or getattr(event, "team_name", None) or root
    member = agent != root
    if kind == "RunContent":
        content = getattr(event, "content", None)
        if not isinstance(content, str) or not content:
            return None
        if member:
            return Event("agent_event", {"event": "RunContent", "agent": agent, "content": content})
        return Event("progress", {"token": content})
    if kind in ("ToolCallStarted", "ToolCallCompleted"):
        tool = getattr(event, "tool", None)
        data: dict[str, Any] = {
            "event": kind,
            "agent": agent,
            "tool": getattr(tool, "tool_name", None),
            "tool_call_id": getattr(tool, "tool_call_id", None),
            "arguments": getattr(tool, "tool_args", None) or {},
        }
        if kind == "ToolCallCompleted":
            result = getattr(tool, "result", None)
            text = result if isinstance(result, str) or result is None else str(result)
            data["result"] = text[:RESULT_PREVIEW] if text else text
            data["error"] = bool(getattr(tool, "tool_call_error", False))
            hits = hits_in_tool_result(text)
            if hits is not None:  # a Knowledge Base's search: which hits the agent was given
                data["hits"] = hits
        return Event("agent_event", data)
    if kind == "CustomEvent" and isinstance(getattr(event, "nodeloom", None), dict):
        # A Flow Tool's child run: one of its events, under the tool call that started it.
        return Event(
            "agent_event",
            {
                "event": "ToolCallProgress",
                "agent": agent,
                "tool_call_id": getattr(event, "tool_call_id", None),
                **event.nodeloom,
            },
        )
    if member and kind in ("RunStarted", "RunCompleted"):
        data = {"event": f"Member{kind}", "agent": agent}
        if kind == "RunCompleted":
            data["content"] = getattr(event, "content", None)
        return Event("agent_event", data)
    return None
