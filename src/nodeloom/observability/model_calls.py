"""Spans of model calls, after the OpenTelemetry GenAI semantic conventions: `chat MODEL`,
with the provider, the model and the token usage; a child of the node that made the call.
With tracing off, each helper is a no-op that imports nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nodeloom.observability.switch import CURRENT_NODE_SPAN, active_tracer


class ModelCall:
    """The span of one model call; `usage()` records its tokens."""

    def __init__(self, span: Any = None) -> None:
        self.span = span

    def usage(self, usage: dict[str, int] | None) -> None:
        if self.span is None or not usage:
            return
        for ours, theirs in (
            ("prompt_tokens", "gen_ai.usage.input_tokens"),
            ("completion_tokens", "gen_ai.usage.output_tokens"),
        ):
            if isinstance(usage.get(ours), int):
                self.span.set_attribute(theirs, usage[ours])


_OFF = ModelCall()


@contextmanager
def model_call(provider: str, model: str) -> Iterator[ModelCall]:
    """Trace one model call (when tracing is on): `with model_call("openai", "gpt-4o") as
    call: ...; call.usage(usage)`. An exception marks the span as an error."""
    tracer = active_tracer()
    if tracer is None:
        yield _OFF
        return
    span = _start(tracer, provider, model)
    try:
        yield ModelCall(span)
    except BaseException as exc:
        _failed(span, exc)
        raise
    finally:
        span.end()


class AgentModelCalls:
    """The model requests an Agno agent makes, from its `ModelRequestStarted` and
    `ModelRequestCompleted` run events: `see(item)` each streamed item, `close()` at the
    end (ending any request left open)."""

    def __init__(self) -> None:
        self.tracer = active_tracer()
        self.open: list[Any] = []

    def see(self, item: Any) -> None:
        if self.tracer is None:
            return
        kind = getattr(item, "event", "")
        kind = kind[4:] if kind.startswith("Team") else kind
        if kind == "ModelRequestStarted":
            provider = str(getattr(item, "model_provider", None) or "unknown").lower()
            span = _start(self.tracer, provider, str(getattr(item, "model", None) or "unknown"))
            agent = getattr(item, "agent_name", None) or getattr(item, "team_name", None)
            if agent:
                span.set_attribute("gen_ai.agent.name", str(agent))
            self.open.append(span)
        elif kind == "ModelRequestCompleted" and self.open:
            call = ModelCall(self.open.pop(0))
            call.usage(
                {
                    "prompt_tokens": getattr(item, "input_tokens", None),
                    "completion_tokens": getattr(item, "output_tokens", None),
                }  # type: ignore[dict-item]
            )
            assert call.span is not None
            call.span.end()

    def close(self) -> None:
        for span in self.open:
            span.end()
        self.open.clear()


def _start(tracer: Any, provider: str, model: str) -> Any:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    parent = CURRENT_NODE_SPAN.get()
    context = trace.set_span_in_context(parent) if parent is not None else None
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
    }
    if parent is not None:
        run_id = getattr(parent, "attributes", {}).get("nodeloom.run.id")
        if run_id:
            attributes["nodeloom.run.id"] = run_id
    return tracer.start_span(
        f"chat {model}", context=context, kind=SpanKind.CLIENT, attributes=attributes
    )


def _failed(span: Any, exc: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", type(exc).__name__)
    span.set_status(Status(StatusCode.ERROR))
