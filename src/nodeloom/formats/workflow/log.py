"""The workflow's log entries (seed 002), written as and read back from a run's events.

The workflow nodes emit their log entries as `progress` events whose data is
`{"log": <type>, "content": <text>, ...details}`:

    step_start      workflow-start, workflow-agent, workflow-if: the node began
    start_prompt    workflow-agent: the user prompt it sends
    llm_response    workflow-agent: the reply text
    llm_error       workflow-agent: the model call failed (the node then fails)
    logic_check     workflow-if: one condition evaluated (one entry per condition tried)
    subagent_call_start / subagent_call_end / subagent_call_error
                    workflow-agent: a subagent was called, answered, or failed; `content`
                    is the JSON payload of the original ({type, parentNodeId,
                    subagentNodeId, subagentName, callId, parentCallId?, depth, message?})

Approvals are the native Approval node, and failures are the engine's, so `logs()` derives
the other entries from the engine's own events:

    step_start      the `started` event of an approval node ("approval node")
    wait_input      its `waiting` event ("Waiting for user approval")
    input_received  its `resumed` event ("User approved this step." / "User rejected this
                    step.", plus " Feedback: <note>")
    error           a node's `error` event (unless the node's last entry is its
                    `llm_error`, as in the original), or a `run_failed` no entry explains
                    yet (the step limit: node "system")
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from nodeloom.plugins.contract import Event

LOG_TYPES = (
    "step_start",
    "start_prompt",
    "logic_check",
    "wait_input",
    "input_received",
    "llm_response",
    "llm_error",
    "error",
    "subagent_call_start",
    "subagent_call_end",
    "subagent_call_error",
)
APPROVAL_TYPE = "approval"


def log_event(kind: str, content: str, **details: Any) -> Event:
    """The progress event a workflow node emits for one log entry."""
    return Event("progress", {"log": kind, "content": content, **details})


def logs(events: Iterable[Event | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A run's log entries as the original engine kept them: `{"timestamp", "nodeId",
    "type", "content"}`, in event order. `events` are `Event`s (a `ListSink`'s) or their
    JSON form (the lines of `nodeloom run --json`)."""
    entries: list[dict[str, Any]] = []
    last: dict[str, str] = {}  # node id -> type of its latest entry

    def add(when: float, node_id: str, kind: str, content: str) -> None:
        entries.append(
            {
                "timestamp": datetime.fromtimestamp(when, UTC).isoformat(),
                "nodeId": node_id,
                "type": kind,
                "content": content,
            }
        )
        last[node_id] = kind

    for event in events:
        kind, node_id, node_type, data, when = _fields(event)
        if kind == "progress" and isinstance(data.get("log"), str) and node_id:
            add(when, node_id, data["log"], str(data.get("content", "")))
        elif node_type == APPROVAL_TYPE and node_id and kind in _APPROVAL:
            add(when, node_id, _APPROVAL[kind], _approval_content(kind, data))
        elif kind == "error" and node_id and last.get(node_id) != "llm_error":
            add(when, node_id, "error", _error_text(data.get("error")))
        elif kind == "run_failed":
            error = data.get("error") or {}
            failed = error.get("node_id") if isinstance(error, Mapping) else None
            if not failed or last.get(failed) not in ("error", "llm_error"):
                add(when, failed or "system", "error", _error_text(error))
    return entries


_APPROVAL = {"started": "step_start", "waiting": "wait_input", "resumed": "input_received"}


def _fields(event: Event | Mapping[str, Any]) -> tuple[str, str | None, str | None, Any, float]:
    if isinstance(event, Event):
        return (
            event.event_type,
            event.node_id,
            event.node_type,
            event.data or {},
            event.timestamp,
        )
    return (
        str(event.get("event_type", "")),
        event.get("node_id"),
        event.get("node_type"),
        event.get("data") or {},
        float(event.get("timestamp") or 0),
    )


def _approval_content(kind: str, data: Mapping[str, Any]) -> str:
    if kind == "started":
        return "approval node"
    if kind == "waiting":
        return "Waiting for user approval"
    answer = data.get("input") if isinstance(data.get("input"), Mapping) else {}
    approved = answer.get("decision") == "approve"
    text = "User approved this step." if approved else "User rejected this step."
    note = answer.get("note")
    if isinstance(note, str) and note.strip():
        text += f" Feedback: {note.strip()}"
    return text


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("cause") or error.get("message") or "")
    return "" if error is None else json.dumps(error)
