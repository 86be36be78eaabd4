"""Graph documents the server tests run (built-ins, and the conformance pack's `sleep`)."""

from __future__ import annotations

from typing import Any

from nodeloom.testing.builders import chain, graph, node


def shout() -> dict[str, Any]:
    """chat-start -> json-transform: upper-cases the message. No LLM, no waiting."""
    return chain(
        node("start", "chat-start"),
        node("shout", "json-transform", name="Shout", expression='{"text": $uppercase(message)}'),
    )


def slow(steps: int = 5, seconds: float = 0.3) -> dict[str, Any]:
    """A chain of `sleep` nodes: a run that stays live for steps * seconds."""
    return chain(*(node(f"s{i}", "sleep", seconds=seconds, value=i) for i in range(steps)))


def ask() -> dict[str, Any]:
    """A Human Input node: the run pauses until it is answered."""
    return graph(node("q", "human-input", prompt="Name?"))


def completion(base_url: str) -> dict[str, Any]:
    """chat-start -> llm-completion at `base_url` (the mock LLM): streams its tokens."""
    return chain(
        node("start", "chat-start"),
        node(
            "llm",
            "llm-completion",
            prompt="{{ $json.message }}",
            model="openai:gpt-4o-mini",
            base_url=base_url,
            api_key="test",
        ),
    )
