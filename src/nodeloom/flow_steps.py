"""`flow_step` blocks (seed 003): one card per node execution of a chat turn, built once
from the run's events, so every client (the web UI, `nodeloom chat`, an API client) shows
the same cards.

    {"type": "flow_step", "node_id": "http-1", "node_type": "http-request",
     "node_name": "Fetch weather", "status": "completed",
     "summary": "GET api.weather.com → 200", "detail": {"outputs": {...}},
     "duration_ms": 340}

`status` is `started`, `completed`, `error` or `skipped`. The `summary` of a completed step
comes from the node type's executor when it has a `summarize(parameters, outputs)` method
(in its node folder, so a new node brings its own), else from the fired ports and the main
output; a skipped step's summary is the reason, a failed step's the error message. Chat
Start itself has no step: it is the bridge that collects them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from nodeloom.plugins.contract import Event

log = logging.getLogger("nodeloom.flow_steps")

SUMMARY_LENGTH = 80
HIDDEN_TYPES = frozenset({"chat-start"})
STEP_EVENTS = frozenset({"started", "completed", "error", "skipped"})
# The events a chat shows when Chat Start's showFlowSteps is off: the run's own events,
# the agents' content (tokens, agent events) and what a person must answer.
CONTENT_EVENTS = frozenset(
    {
        "run_started",
        "run_resumed",
        "run_completed",
        "run_failed",
        "run_cancelled",
        "run_paused",
        "agent_event",
        "waiting",
        "resumed",
    }
)

Summarizer = Callable[[Mapping[str, Any], Mapping[str, Any]], "str | None"]
Lookup = Callable[[str | None, str | None], "tuple[Mapping[str, Any], Summarizer | None]"]


def is_content(event: Event) -> bool:
    """Whether a chat without flow steps shows this event."""
    if event.event_type == "progress":
        return bool((event.data or {}).get("token"))
    return event.event_type in CONTENT_EVENTS


def shows_flow_steps(graph: Any) -> bool:
    """Chat Start's showFlowSteps (on unless every Chat Start turns it off)."""
    starts = [node for node in graph.nodes if node.type == "chat-start"]
    return not starts or any(node.data.get("showFlowSteps", True) is not False for node in starts)


class FlowSteps:
    """Turns a run's events into flow_step blocks. `push(event)` answers the block the event
    starts or ends (None for other events); `blocks` holds one block per node execution,
    in the order they started, each as it stands now."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self.blocks: list[dict[str, Any]] = []
        self._open: dict[str, dict[str, Any]] = {}  # node id -> its running block

    def push(self, event: Event) -> dict[str, Any] | None:
        if event.event_type not in STEP_EVENTS or event.node_id is None:
            return None
        if event.node_type in HIDDEN_TYPES:
            return None
        data = event.data or {}
        if event.event_type == "started":
            block = self._block(event, "started")
            self._open[event.node_id] = block
            self.blocks.append(block)
            return dict(block)
        block = self._open.pop(event.node_id, None)
        if block is None:  # skipped (never started), or a stream joined midway
            block = self._block(event, event.event_type)
            self.blocks.append(block)
        block["status"] = event.event_type
        block["duration_ms"] = _duration(data)
        if event.event_type == "completed":
            outputs = data.get("outputs") or {}
            block["summary"] = self._summary(event, outputs)
            block["detail"] = {"outputs": outputs}
        elif event.event_type == "error":
            error = data.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            block["summary"] = _short(str(message or "failed"))
            block["detail"] = {"error": error}
        else:
            reason = str(data.get("reason") or "skipped")
            block["summary"] = _short(reason)
            block["detail"] = {"reason": reason}
        return dict(block)

    def _block(self, event: Event, status: str) -> dict[str, Any]:
        return {
            "type": "flow_step",
            "node_id": event.node_id,
            "node_type": event.node_type,
            "node_name": event.node_name,
            "status": status,
            "summary": "",
            "detail": {},
            "duration_ms": None,
        }

    def _summary(self, event: Event, outputs: Mapping[str, Any]) -> str:
        parameters, summarize = self._lookup(event.node_id, event.node_type)
        if summarize is not None:
            try:
                text = summarize(parameters, outputs)
            except Exception:  # a summary never breaks a chat: fall back, and say so
                log.warning("summarize() of node type %s failed", event.node_type, exc_info=True)
                text = None
            if text:
                return _short(text)
        return generic_summary(outputs)


def generic_summary(outputs: Mapping[str, Any]) -> str:
    """The fired ports and the beginning of the first one's value: `→ output: {"a": 1}`."""
    if not outputs:
        return "no output"
    port, value = next(iter(outputs.items()))
    ports = ", ".join(outputs)
    return _short(f"→ {ports}: {preview(value)}" if port else f"→ {ports}")


def preview(value: Any) -> str:
    """A value's beginning: a string (or an object's `text`/`response`) as text, else JSON."""
    if isinstance(value, dict):
        for key in ("text", "response", "message"):
            if isinstance(value.get(key), str):
                return value[key]
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def first_words(text: str, words: int = 12) -> str:
    """The first `words` words of `text`, with … if there is more."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def registry_lookup(graph: Any, registry: Any) -> Lookup:
    """A lookup of a node's parameters (its inline data) and its type's summarize hook."""
    nodes = {node.id: node for node in graph.nodes} if graph is not None else {}

    def lookup(node_id: str | None, node_type: str | None) -> tuple[Mapping[str, Any], Any]:
        node = nodes.get(node_id or "")
        parameters = node.data if node is not None else {}
        summarize = None
        if node_type:
            try:
                summarize = getattr(registry.executor(node_type).executor, "summarize", None)
            except Exception:  # an unknown or broken type: the generic summary
                summarize = None
        return parameters, summarize

    return lookup


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"


def _duration(data: Mapping[str, Any]) -> int | None:
    value = data.get("duration_ms")
    return round(value) if isinstance(value, int | float) else None
