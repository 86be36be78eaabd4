"""The native graph's wiring for a converted Ethan graph: edges from each node's route
ports, what the start can reach (the rest is left out), and columns for the editor.
"""

from __future__ import annotations

from collections import deque
from typing import Any


def unique(candidate: str, taken: set[str]) -> str:
    """`candidate`, or `candidate2`, `candidate3`... if taken; the name is added to `taken`."""
    name, number = candidate, 1
    while name in taken:
        number += 1
        name = f"{candidate}{number}"
    taken.add(name)
    return name


def native_edge(source: str, port: str, target: str) -> dict[str, Any]:
    """A native edge from an output port of `source` to the input of `target`."""
    return {
        "id": f"{source}:{port}",
        "source": source,
        "sourceHandle": port,
        "target": target,
        "targetHandle": "input",
    }


def route_edges(native: dict[str, Any]) -> list[dict[str, Any]]:
    """An edge per route of a converted node: port `route-<i>` to the route's target."""
    return [
        native_edge(native["id"], f"route-{index}", target)
        for index, target in enumerate(native["data"]["routes"])
    ]


def reachable(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], roots: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The nodes and edges some path from the roots reaches (the others could never run)."""
    following: dict[str, list[str]] = {}
    for edge in edges:
        following.setdefault(edge["source"], []).append(edge["target"])
    seen = set(roots)
    queue = deque(roots)
    while queue:
        for target in following.get(queue.popleft(), []):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    kept = [node for node in nodes if node["id"] in seen]
    return kept, [e for e in edges if e["source"] in seen and e["target"] in seen]


def place(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], roots: list[str]) -> None:
    """Columns by distance from the roots, for the editor (positions never affect a run)."""
    column = {root: 0 for root in roots}
    following: dict[str, list[str]] = {}
    for edge in edges:
        following.setdefault(edge["source"], []).append(edge["target"])
    queue = deque(roots)
    while queue:
        current = queue.popleft()
        for target in following.get(current, []):
            if target not in column:
                column[target] = column[current] + 1
                queue.append(target)
    rows: dict[int, int] = {}
    for node in nodes:
        x = column.get(node["id"], 0)
        y = rows.get(x, 0)
        rows[x] = y + 1
        node["position"] = {"x": 280 * x, "y": 140 * y}


__all__ = ["native_edge", "place", "reachable", "route_edges", "unique"]
