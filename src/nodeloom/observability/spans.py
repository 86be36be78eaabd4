"""A run's events as OpenTelemetry spans: one per run, one per node execution (a child of
the run's), one per tool call an agent makes (a child of its node's). Imported only when
tracing is on.

Attributes come from the events, which the engine has already cleared of secret values;
no message text, input or output goes into a span.
"""

from __future__ import annotations

import logging
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from nodeloom.observability.switch import CURRENT_NODE_SPAN
from nodeloom.plugins.contract import Event, EventSink

log = logging.getLogger(__name__)

_RUN_ENDS = {
    "run_completed": "completed",
    "run_failed": "failed",
    "run_cancelled": "cancelled",
    "run_paused": "paused",
}


class TraceSink:
    """Passes every event on to `inner`, and turns the run's events into spans. A failure
    to trace is logged and never reaches the run."""

    def __init__(self, inner: EventSink, tracer: Any, flow_name: str | None) -> None:
        self.inner = inner
        self.tracer = tracer
        self.flow_name = flow_name
        self.run: Any = None
        self.nodes: dict[str, Any] = {}
        self.retries: dict[str, int] = {}
        self.tools: dict[tuple[str, str], list[Any]] = {}

    def emit(self, event: Event) -> None:
        self.inner.emit(event)
        try:
            self._trace(event)
        except Exception:  # tracing never breaks a run
            log.warning("could not trace event %s", event.event_type, exc_info=True)

    def _trace(self, event: Event) -> None:
        kind = event.event_type
        at = int(event.timestamp * 1e9)
        if kind in ("run_started", "run_resumed"):
            self._start_run(event, at, resumed=kind == "run_resumed")
        elif kind in _RUN_ENDS:
            self._end_run(event, _RUN_ENDS[kind], at)
        elif event.node_id is None or self.run is None:
            return
        elif kind == "started":
            self._start_node(event, at)
        elif kind == "progress" and "retry" in (event.data or {}):
            self.retries[event.node_id] = self.retries.get(event.node_id, 0) + 1
        elif kind in ("completed", "error"):
            self._end_node(event, "completed" if kind == "completed" else "error", at)
        elif kind == "skipped":
            reason = str((event.data or {}).get("reason", ""))
            self.run.add_event("node skipped", self._node_attributes(event, reason=reason), at)
        elif kind == "agent_event":
            self._tool(event, at)

    def _start_run(self, event: Event, at: int, resumed: bool) -> None:
        name = self.flow_name or "flow"
        attributes: dict[str, Any] = {"nodeloom.run.id": event.run_id, "nodeloom.flow.name": name}
        if resumed:
            attributes["nodeloom.run.resumed"] = True
        self.run = self.tracer.start_span(
            f"run {name}", kind=SpanKind.INTERNAL, attributes=attributes, start_time=at
        )

    def _end_run(self, event: Event, status: str, at: int) -> None:
        if self.run is None:
            return
        for node_id in list(self.nodes):
            self._close_node(node_id, "waiting" if status == "paused" else status, at)
        data = event.data or {}
        self.run.set_attribute("nodeloom.run.status", status)
        if isinstance(data.get("steps"), int):
            self.run.set_attribute("nodeloom.run.steps", data["steps"])
        _set_usage(self.run, data.get("usage"))
        if status == "failed":
            error = data.get("error") or {}
            self.run.set_attribute("error.type", str(error.get("code", "run_failed")))
            self.run.set_status(Status(StatusCode.ERROR, str(error.get("message", ""))[:500]))
        self.run.end(end_time=at)
        self.run = None

    def _start_node(self, event: Event, at: int) -> None:
        context = trace.set_span_in_context(self.run)
        span = self.tracer.start_span(
            f"node {event.node_name}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=self._node_attributes(event),
            start_time=at,
        )
        self.nodes[event.node_id] = span
        self.retries.pop(event.node_id, None)
        CURRENT_NODE_SPAN.set(span)

    def _end_node(self, event: Event, status: str, at: int) -> None:
        span = self.nodes.get(event.node_id)
        if span is None:
            return
        data = event.data or {}
        if isinstance(data.get("duration_ms"), int | float):
            span.set_attribute("nodeloom.node.duration_ms", float(data["duration_ms"]))
        _set_usage(span, data.get("usage"))
        if status == "error":
            error = data.get("error") or {}
            span.set_attribute("error.type", str(error.get("code", "node_error")))
            span.set_attribute("nodeloom.node.handled", bool(data.get("handled")))
            span.set_status(Status(StatusCode.ERROR, str(error.get("message", ""))[:500]))
            if isinstance(data.get("attempts"), int):
                self.retries[event.node_id] = data["attempts"] - 1
        self._close_node(event.node_id, status, at)

    def _close_node(self, node_id: str, status: str, at: int) -> None:
        span = self.nodes.pop(node_id)
        span.set_attribute("nodeloom.node.status", status)
        span.set_attribute("nodeloom.node.attempts", self.retries.pop(node_id, 0) + 1)
        for key in [k for k in self.tools if k[0] == node_id]:
            for tool in self.tools.pop(key):
                tool.end(end_time=at)
        span.end(end_time=at)

    def _tool(self, event: Event, at: int) -> None:
        data = event.data or {}
        node = self.nodes.get(event.node_id)
        tool = data.get("tool")
        if node is None or not isinstance(tool, str):
            return
        key = (event.node_id, tool)
        if data.get("event") == "ToolCallStarted":
            span = self.tracer.start_span(
                f"execute_tool {tool}",
                context=trace.set_span_in_context(node),
                kind=SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.agent.name": str(data.get("agent", "")),
                    "nodeloom.run.id": event.run_id,
                },
                start_time=at,
            )
            self.tools.setdefault(key, []).append(span)
        elif data.get("event") == "ToolCallCompleted" and self.tools.get(key):
            span = self.tools[key].pop(0)
            if data.get("error"):
                span.set_status(Status(StatusCode.ERROR))
                span.set_attribute("error.type", "tool_error")
            span.end(end_time=at)

    def _node_attributes(self, event: Event, **extra: str) -> dict[str, Any]:
        attributes = {
            "nodeloom.run.id": event.run_id,
            "nodeloom.node.id": event.node_id,
            "nodeloom.node.name": event.node_name or event.node_id,
            "nodeloom.node.type": event.node_type or "",
        }
        attributes.update({f"nodeloom.node.{k}": v for k, v in extra.items()})
        return attributes


def _set_usage(span: Any, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        if isinstance(usage.get(key), int):
            span.set_attribute(f"nodeloom.usage.{key}", usage[key])
