"""Whether runs are traced, and with which tracer. Importing this module costs nothing:
OpenTelemetry is imported only once tracing is on.

Tracing is on when the standard OpenTelemetry variables configure an OTLP exporter
(`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; not when
`OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`), or when a program hands a tracer
provider to `configure_tracing`.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

TRACER_NAME = "nodeloom"

# The span of the node execution running in this task (set by the trace sink when the
# node starts), so model calls made while it runs become its children.
CURRENT_NODE_SPAN: ContextVar[Any] = ContextVar("nodeloom_node_span", default=None)

_configured: Any = None  # a tracer from configure_tracing
_from_environment: Any = None  # the tracer built from the OTEL_* variables, once


def configure_tracing(tracer_provider: Any) -> None:
    """Trace every run with this OpenTelemetry `TracerProvider` (whatever the
    environment says); `None` goes back to the environment's configuration."""
    global _configured
    if tracer_provider is None:
        _configured = None
        return
    _configured = tracer_provider.get_tracer(TRACER_NAME, _version())


def _endpoint_keys() -> tuple[Any, Any] | None:
    """The two endpoint variables as keys of `os.environ`'s own table (bytes on POSIX), so
    that "is either set?" is two dict lookups; None where the table is not there."""
    environ = os.environ
    if not isinstance(getattr(environ, "_data", None), dict):
        return None
    encode = environ.encodekey  # type: ignore[attr-defined]
    return encode("OTEL_EXPORTER_OTLP_ENDPOINT"), encode("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


_ENDPOINT_KEYS = _endpoint_keys()


def configured_by_environment() -> bool:
    """Asked at every run (so a variable set after import counts), and the common answer
    comes first and costs two dict lookups: `key in os.environ` goes through
    `Mapping.__contains__` and raises and catches a KeyError for an unset variable
    (~0.7 µs each; the table `os.environ` keeps in step with itself, ~0.04 µs)."""
    keys = _ENDPOINT_KEYS
    if keys is not None:
        table = os.environ._data  # type: ignore[attr-defined]
        if keys[0] not in table and keys[1] not in table:
            return False
    elif "OTEL_EXPORTER_OTLP_ENDPOINT" not in os.environ and (
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" not in os.environ
    ):
        return False
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def active_tracer() -> Any:
    """The tracer runs are traced with, or None when tracing is off."""
    if _configured is not None:
        return _configured
    keys = _ENDPOINT_KEYS
    if keys is not None:  # the common answer first, without a call (asked at every run)
        table = os.environ._data  # type: ignore[attr-defined]
        if keys[0] not in table and keys[1] not in table:
            return None
    if not configured_by_environment():
        return None
    global _from_environment
    if _from_environment is None:
        _from_environment = _tracer_from_environment()
    return _from_environment


def _tracer_from_environment() -> Any:
    """The process's global tracer provider if the host program set one up, else an SDK
    provider exporting over OTLP/HTTP as the OTEL_* variables say (flushed at exit)."""
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""
        )
        resource = Resource.create({} if named else {"service.name": "nodeloom"})
        sdk_provider = TracerProvider(resource=resource)
        sdk_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(sdk_provider)
        provider = sdk_provider
    return provider.get_tracer(TRACER_NAME, _version())


def _version() -> str:
    from importlib.metadata import version  # not `nodeloom.__version__`: no import cycle

    return version("nodeloom")
