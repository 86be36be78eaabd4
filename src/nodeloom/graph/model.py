"""The graph: nodes and edges, as loaded from the React-Flow-shaped JSON of the seeds.

    {"name"?, "description"?, "version"?, "variables"?: {...},
     "nodes": [{"id", "type", "data": {...parameters, "name"?}, "position"?}],
     "edges": [{"id"?, "source", "sourceHandle", "target", "targetHandle"}]}

Positions never affect execution. Other keys React Flow keeps on nodes and edges
(`width`, `selected`, `style`, ...) are tolerated and ignored; `data` is checked strictly
against the node's definition by `nodeloom.graph.validation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    type: str
    data: dict[str, Any]
    position: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        name = self.data.get("name")
        return name if isinstance(name, str) and name else self.id


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    source: str
    source_handle: str
    target: str
    target_handle: str


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    name: str | None = None
    description: str | None = None
    version: str | int | None = None
    variables: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)  # {"max_steps": N}: run defaults
    error_flow: str | None = None  # a saved flow (id or name) run when a run of this one fails

    def node(self, node_id: str) -> Node | None:
        return self.by_id.get(node_id)

    @property
    def by_id(self) -> dict[str, Node]:
        cached = self.__dict__.get("_by_id")
        if cached is None:
            cached = {n.id: n for n in self.nodes}
            object.__setattr__(self, "_by_id", cached)
        return cached

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for key in ("name", "description", "version"):
            if getattr(self, key) is not None:
                document[key] = getattr(self, key)
        if self.variables:
            document["variables"] = self.variables
        if self.limits:
            document["limits"] = self.limits
        if self.error_flow:
            document["error_flow"] = self.error_flow
        document["nodes"] = [
            {
                "id": n.id,
                "type": n.type,
                "data": n.data,
                **({"position": {"x": n.position[0], "y": n.position[1]}} if n.position else {}),
            }
            for n in self.nodes
        ]
        document["edges"] = [
            {
                "id": e.id,
                "source": e.source,
                "sourceHandle": e.source_handle,
                "target": e.target,
                "targetHandle": e.target_handle,
            }
            for e in self.edges
        ]
        return document
