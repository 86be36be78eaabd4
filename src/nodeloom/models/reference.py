"""Model references: `provider:model`, or an object with overrides, as written in graphs.

    "openai:gpt-4o-mini"
    {"model": "openai-compatible:qwen2.5", "base_url": "http://localhost:8000/v1"}

A reference never carries an API key on a wire (a Model Selector's output is visible in
events); keys come from the provider's environment variable or a node's `api_key`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from nodeloom.errors import NodeloomError
from nodeloom.models.providers import PROVIDERS


class ModelConfigError(NodeloomError):
    """A model reference is malformed, or its provider is not configured."""

    code = "model_not_configured"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None

    @property
    def reference(self) -> str:
        return f"{self.provider}:{self.model}"

    def public(self) -> dict[str, Any]:
        """What may travel on a wire and appear in events: no key."""
        data: dict[str, Any] = {"model": self.reference}
        if self.base_url:
            data["base_url"] = self.base_url
        return data


def parse_reference(value: Any, *, where: str = "model") -> ModelSpec:
    """A ModelSpec from a `provider:model` string or a `{"model", "base_url"?}` object."""
    base_url = None
    if isinstance(value, dict):
        base_url = value.get("base_url")
        value = value.get("model")
    if not isinstance(value, str) or not value.strip():
        raise ModelConfigError(
            f"{where}: a model is written 'provider:model', for example "
            f"'openai:gpt-4o-mini'; got {value!r}"
        )
    provider, sep, model = value.strip().partition(":")
    if not sep or not model:
        raise ModelConfigError(
            f"{where}: '{value}' names no provider; write 'provider:model', for example "
            f"'openai:{value}'. Providers: {', '.join(PROVIDERS)}"
        )
    if provider not in PROVIDERS:
        hint = difflib.get_close_matches(provider, PROVIDERS, n=1)
        suggestion = f"did you mean '{hint[0]}'? " if hint else ""
        raise ModelConfigError(
            f"{where}: unknown model provider '{provider}'; {suggestion}providers: "
            f"{', '.join(PROVIDERS)}"
        )
    return ModelSpec(provider, model, base_url=base_url)
