"""Small builders for graphs in tests and examples.

graph(
    node("start", "chat-start"),
    node("t", "prompt-template", template="Hi {{ $json.message }}"),
    edge("start", "t"),
)
"""

from __future__ import annotations

import itertools
from typing import Any


def node(node_id: str, node_type: str, /, **data: Any) -> dict[str, Any]:
    return {"id": node_id, "type": node_type, "data": data}


def edge(
    source: str,
    target: str,
    source_handle: str = "output",
    target_handle: str = "input",
    *,
    edge_id: str | None = None,
) -> dict[str, Any]:
    return {
        "id": edge_id or f"{source}.{source_handle}->{target}.{target_handle}",
        "source": source,
        "sourceHandle": source_handle,
        "target": target,
        "targetHandle": target_handle,
    }


def graph(*parts: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A graph document from node() and edge() parts (told apart by their keys)."""
    nodes = [p for p in parts if "type" in p]
    edges = [p for p in parts if "source" in p]
    return {**top, "nodes": nodes, "edges": edges}


def chain(*nodes: dict[str, Any]) -> dict[str, Any]:
    """Nodes wired output -> input one after the other."""
    edges = [edge(a["id"], b["id"]) for a, b in itertools.pairwise(nodes)]
    return graph(*nodes, *edges)
