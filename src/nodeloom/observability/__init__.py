"""Traces of runs in OpenTelemetry (docs/observability.md). Off, and free, unless the
OTEL_* variables configure an exporter or a program calls `configure_tracing`.

Operations live in submodules, imported by who needs them: `metrics` (RunMetrics, the
Prometheus text), `fleet` (WorkerBeat: a process's row in the worker registry), `health`
(the checks of `GET /api/health`), `queue` (Redis PING and depth), `logs` (JSON lines
with run and node ids; the token filter), `log_options` (the shared `--log-format`),
`heap` (`settle_heap`: long-lived processes freeze their start-up heap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nodeloom.observability.model_calls import AgentModelCalls, ModelCall, model_call
from nodeloom.observability.switch import active_tracer, configure_tracing

if TYPE_CHECKING:
    from nodeloom.plugins.contract import EventSink

__all__ = ["AgentModelCalls", "ModelCall", "configure_tracing", "model_call", "traced"]


def traced(sink: EventSink, flow_name: str | None) -> EventSink:
    """`sink`, wrapped to trace the run when tracing is on."""
    tracer = active_tracer()
    if tracer is None:
        return sink
    from nodeloom.observability.spans import TraceSink

    return TraceSink(sink, tracer, flow_name)
