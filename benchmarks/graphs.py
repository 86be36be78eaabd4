"""The graph documents the benchmarks run, and the registry with the benchmark pack.

Every chain counts its trigger: a chain of N nodes is `chat-start` then N - 1 `merge`
nodes (the built-in Merge is a trivial node: it outputs the list of what arrived).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nodeloom
from nodeloom.testing.builders import chain, edge, graph, node

PACK = Path(__file__).parent / "pack"


def registry() -> nodeloom.Registry:
    """The built-in catalogue plus `benchmarks/pack` (the `sleep` node)."""
    found = nodeloom.Registry.discover(
        paths=[str(PACK)], use_entry_points=False, use_environment=False
    )
    if found.failures:
        raise RuntimeError(f"the benchmark pack failed to load: {found.failures}")
    return found


def trivial_chain(n: int) -> dict[str, Any]:
    """N nodes in a line: the trigger, then N - 1 Merge nodes."""
    merges = [node(f"m{i}", "merge") for i in range(1, n)]
    return chain(node("start", "chat-start"), *merges)


def passing_chain(n: int) -> dict[str, Any]:
    """N nodes in a line: the trigger, then N - 1 Sleep(0) nodes that pass the trigger's
    data on unchanged (each yields to the event loop once, as a node doing I/O would).
    Every node's record is the same size, wherever it sits in the chain; a Merge chain
    nests its value one level deeper per node, so its records grow along the chain."""
    sleeps = [node(f"s{i}", "sleep", seconds=0) for i in range(1, n)]
    return chain(node("start", "chat-start"), *sleeps)


def fan_out(branches: int, seconds: float) -> dict[str, Any]:
    """The trigger wired to `branches` Sleep nodes, each awaiting `seconds`."""
    sleeps = [node(f"s{i}", "sleep", seconds=seconds) for i in range(branches)]
    return graph(node("start", "chat-start"), *sleeps, *(edge("start", s["id"]) for s in sleeps))


def three_nodes(seconds: float) -> dict[str, Any]:
    """Trigger -> Sleep(`seconds`) -> Merge."""
    return chain(
        node("start", "chat-start"), node("wait", "sleep", seconds=seconds), node("end", "merge")
    )


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document)
