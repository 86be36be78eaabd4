"""`meta.defaults.llm` and `meta.providers` -> a nodeloom model reference.

`defaults.llm` is `<provider id>:<model>`. The provider id names an entry of
`meta.providers`, whose `type` says which nodeloom provider serves it:

    openai                         -> openai:<model>
    openai_compatible, lmstudio    -> openai-compatible:<model>  (base_url required)
    claude, anthropic              -> anthropic:<model>
    ollama                         -> ollama:<model>

Without a `providers` entry, the id itself must be one of those. The entry's `model`
replaces the model of `defaults.llm`; its `base_url` and `api_key` (or
`client_kwargs.base_url` / `client_kwargs.api_key`), `temperature` (else
`defaults.temp`), `max_tokens` (or `kwargs.max_tokens`) apply to every LLM node, and its
`request_timeout` is the LLM nodes' default timeout. `{{env.NAME}}` in `base_url` and
`api_key` is read from the environment when the run starts (a missing variable fails it
before any call).
"""

from __future__ import annotations

import os
import re
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.ethan.schema import Meta

TYPES = {
    "openai": "openai",
    "openai_compatible": "openai-compatible",
    "openai-compatible": "openai-compatible",
    "lmstudio": "openai-compatible",
    "claude": "anthropic",
    "anthropic": "anthropic",
    "ollama": "ollama",
}
_KWARGS = frozenset({"max_tokens", "temperature"})
_CLIENT_KWARGS = frozenset({"api_key", "base_url"})
ENV = re.compile(r"^\s*{{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*}}\s*$")


def resolve(meta: Meta) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The model of the LLM nodes as `{"model", "base_url"?, "api_key"?, "temperature"?,
    "max_tokens"?, "timeout"?}`, or None and the issues."""
    where = "meta.defaults.llm"
    text = meta.defaults.llm
    if not text:
        return None, [
            Issue(
                "invalid_graph",
                "the graph has LLM nodes but no model: set meta.defaults.llm, e.g. "
                "'openai:gpt-4o-mini'",
                field=where,
            )
        ]
    provider_id, sep, model = text.partition(":")
    if not sep:
        provider_id, model = "openai", text
    settings = meta.providers.get(provider_id)
    kind = (settings.type if settings and settings.type else None) or provider_id
    provider = TYPES.get(kind)
    if provider is None:
        field = f"meta.providers.{provider_id}.type" if settings and settings.type else where
        return None, [
            Issue(
                "unsupported_feature",
                f"provider {kind!r} is not supported; provider types: "
                + ", ".join(sorted(set(TYPES)))
                + " (declare it under meta.providers with one of these types)",
                field=field,
            )
        ]
    spec: dict[str, Any] = {}
    issues: list[Issue] = []
    if settings is not None:
        prefix = f"meta.providers.{provider_id}"
        for key in sorted(set(settings.kwargs) - _KWARGS):
            issues.append(_unsupported(f"{prefix}.kwargs.{key}", _KWARGS))
        for key in sorted(set(settings.client_kwargs) - _CLIENT_KWARGS):
            issues.append(_unsupported(f"{prefix}.client_kwargs.{key}", _CLIENT_KWARGS))
        model = settings.model or model
        spec["base_url"] = settings.base_url or settings.client_kwargs.get("base_url")
        spec["api_key"] = settings.api_key or settings.client_kwargs.get("api_key")
        spec["temperature"] = (
            settings.temperature
            if settings.temperature is not None
            else settings.kwargs.get("temperature")
        )
        spec["max_tokens"] = settings.max_tokens or settings.kwargs.get("max_tokens")
        spec["timeout"] = settings.request_timeout
    if spec.get("temperature") is None:
        spec["temperature"] = meta.defaults.temp
    if not model:
        issues.append(
            Issue("invalid_graph", f"{text!r} names no model; write 'provider:model'", field=where)
        )
    if issues:
        return None, issues
    spec["model"] = f"{provider}:{model}"
    return {k: v for k, v in spec.items() if v is not None}, []


def _unsupported(field: str, supported: frozenset[str]) -> Issue:
    return Issue(
        "unsupported_feature",
        f"'{field.rsplit('.', 1)[-1]}' is not supported here; supported: "
        + ", ".join(sorted(supported)),
        field=field,
    )


def resolve_env(value: Any, where: str) -> Any:
    """`{{env.NAME}}` -> the variable's value. KeyError-free: ValueError names it."""
    if isinstance(value, str):
        match = ENV.match(value)
        if match:
            name = match.group(1)
            if name not in os.environ:
                raise ValueError(f"{where}: the environment variable {name} is not set")
            return os.environ[name]
    return value


__all__ = ["ENV", "TYPES", "resolve", "resolve_env"]
