from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def spans() -> Iterator[Any]:
    """Runs traced into the OpenTelemetry SDK's in-memory exporter, for this test only."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from nodeloom.observability import configure_tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    configure_tracing(provider)
    try:
        yield exporter
    finally:
        configure_tracing(None)
        provider.shutdown()


def tree(spans: Any) -> list[str]:
    """The spans as indented names, children under their parent, in start order."""
    by_id = {span.context.span_id: span for span in spans}

    def depth(span: Any) -> int:
        level = 0
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            level += 1
        return level

    ordered = sorted(spans, key=lambda s: (s.start_time, depth(s)))
    return ["  " * depth(s) + s.name for s in ordered]
