"""Parameters the knowledge nodes share (pure data: definitions import this at start-up,
so it imports nothing but the plugin contract)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins import Parameter

DEFAULT_MODEL = "local:all-minilm-l6-v2"
PROVIDERS = ("local", "openai", "ollama", "openai-compatible")
SEARCH_MODES = ("hybrid", "vector", "keyword")

MODEL = Parameter(
    "model",
    "string",
    "Embedding model",
    default=DEFAULT_MODEL,
    description="local:all-minilm-l6-v2 (offline, the default), openai:text-embedding-3-small "
    "(OPENAI_API_KEY), ollama:<name>, or openai-compatible:<name> with base_url. A collection "
    "keeps the model it was built with.",
    placeholder=DEFAULT_MODEL,
)
SEARCH_MODEL = Parameter(
    "model",
    "string",
    "Embedding model",
    description="The model that embeds the query. Default: the collection's own model "
    "(set it only to use a remote model's base_url or key).",
    placeholder=DEFAULT_MODEL,
)
BASE_URL = Parameter(
    "base_url",
    "string",
    "Base URL",
    description="The /v1 address of an OpenAI-compatible or Ollama server (remote models).",
    placeholder="http://localhost:8080/v1",
)
COLLECTION = Parameter(
    "collection",
    "string",
    "Collection",
    required=True,
    description="The collection's name (created on first write).",
    placeholder="docs",
)


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def check_model(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    model = data.get("model")
    if model in (None, "") or _is_expression(model):
        return []
    if not isinstance(model, str):
        return [("model", f"the model is a string like {DEFAULT_MODEL!r}")]
    provider, _, name = model.partition(":")
    if not name:
        provider = "local"
        name = model
    if provider not in PROVIDERS:
        return [
            (
                "model",
                f"unknown embedding provider {provider!r} in {model!r}; use one of "
                f"{', '.join(PROVIDERS)}",
            )
        ]
    if provider == "local" and name != "all-minilm-l6-v2":
        return [("model", f"no local model {name!r}; the local model is 'all-minilm-l6-v2'")]
    if provider == "openai-compatible" and not data.get("base_url"):
        return [("base_url", f"{model!r} needs base_url (the server's /v1 address)")]
    return []


def check_collection(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    name = data.get("collection")
    if name is None or _is_expression(name):
        return []
    if not isinstance(name, str) or not name.strip():
        return [("collection", "name the collection, e.g. 'docs'")]
    return []
