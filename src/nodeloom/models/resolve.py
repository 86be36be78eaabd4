"""Turning a ModelSpec into an Agno model, after checking the provider is configured."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
from typing import Any

from nodeloom.models.providers import PROVIDERS, Provider
from nodeloom.models.reference import ModelConfigError, ModelSpec


def with_overrides(spec: ModelSpec, **overrides: Any) -> ModelSpec:
    """The spec with the given non-empty overrides (a node's base_url, api_key, ...)."""
    changes = {k: v for k, v in overrides.items() if v not in (None, "")}
    return dataclasses.replace(spec, **changes) if changes else spec


def check_configured(spec: ModelSpec, *, where: str = "model") -> None:
    """Raise ModelConfigError naming the fix if a call with `spec` cannot be made."""
    provider = PROVIDERS[spec.provider]
    if provider.requires and importlib.util.find_spec(provider.requires) is None:
        install = (
            f"pip install 'nodeloom[{provider.extra}]'"
            if provider.extra
            else f"pip install {provider.requires}"
        )
        raise ModelConfigError(
            f"{where}: the '{spec.provider}' provider needs the '{provider.requires}' package, "
            f"which is not installed; run: {install}"
        )
    from nodeloom.models.endpoints import check_key  # httpx: not at definition load

    check_key(spec, where=where)
    if provider.key_env and not (spec.api_key or os.environ.get(provider.key_env)):
        raise ModelConfigError(
            f"{where}: no API key for '{spec.reference}'; set {provider.key_env} in the "
            "environment, or the node's api_key"
        )
    if provider.needs_base_url and not _base_url(spec, provider):
        raise ModelConfigError(
            f"{where}: '{spec.reference}' needs a base URL; set the node's base_url or "
            f"{provider.base_url_env}"
        )


def create_model(spec: ModelSpec, *, where: str = "model", http_client: Any = None) -> Any:
    """An Agno model for the spec (checked first; no network call is made). Pass the
    `http_client` of the run or build (a `model_http_client`) so connections are pooled
    and closed with it. The environment's key is attached only at the provider's own
    endpoint (see `nodeloom.models.endpoints`)."""
    check_configured(spec, where=where)
    provider = PROVIDERS[spec.provider]
    cls = getattr(importlib.import_module(provider.module), provider.cls)
    _agno_logs_to_stderr()
    kwargs: dict[str, Any] = {"id": spec.model}
    base_url = _base_url(spec, provider)
    if base_url:
        outer, _, inner = provider.base_url_param.partition(".")
        if inner:
            kwargs[outer] = {inner: base_url}
        else:
            kwargs[outer] = base_url
    from nodeloom.models.endpoints import api_key_for, model_http_client
    from nodeloom.net.transport import Borrowed, GuardedTransport

    api_key = api_key_for(spec, where=where)
    if api_key:
        kwargs["api_key"] = api_key
    if http_client is None:
        http_client = model_http_client()  # guarded; closed when collected
    if spec.temperature is not None:
        kwargs["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        kwargs["max_tokens"] = spec.max_tokens
    if provider.http_client:
        kwargs["http_client"] = http_client
    elif isinstance(getattr(http_client, "_transport", None), GuardedTransport):
        # Ollama's client takes httpx arguments: lend it the guarded transport.
        kwargs["client_params"] = {"transport": Borrowed(http_client._transport)}
    return cls(**kwargs)


def _base_url(spec: ModelSpec, provider: Provider) -> str | None:
    if spec.base_url:
        return spec.base_url
    return os.environ.get(provider.base_url_env) if provider.base_url_env else None


_rerouted = False


def _agno_logs_to_stderr() -> None:
    """Agno logs to stdout when stdout is not a terminal; stdout is where nodeloom writes
    results (`nodeloom run --json`). Send Agno's log records to stderr instead, once."""
    global _rerouted
    if _rerouted:
        return
    _rerouted = True
    import logging
    import sys

    for name in list(logging.root.manager.loggerDict):
        if not name.startswith("agno"):
            continue
        for handler in getattr(logging.getLogger(name), "handlers", ()):
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
                handler.setStream(sys.stderr)
            console = getattr(handler, "console", None)
            if console is not None and getattr(console, "stderr", True) is False:
                from rich.console import Console

                handler.console = Console(stderr=True)  # type: ignore[attr-defined]
