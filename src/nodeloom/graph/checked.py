"""What validation learned about a graph: `CheckedGraph` and its `NodeInfo`s.

The engine compiles its run plan from a `CheckedGraph` without analysing the graph again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nodeloom.errors import GraphError, Issue
from nodeloom.expressions import Template
from nodeloom.graph.definitions import DefinitionSpec, Port
from nodeloom.graph.model import Graph, Node
from nodeloom.graph.structure import Structure


@dataclass
class NodeInfo:
    """What validation learned about one node."""

    node: Node
    definition: DefinitionSpec | None
    inputs: dict[str, Port] = field(default_factory=dict)  # spine ports and side sockets
    outputs: dict[str, Port] = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)  # "param.path" -> template
    bodies: dict[str, CheckedGraph] = field(default_factory=dict)  # graph params (Loop body)


@dataclass
class CheckedGraph:
    graph: Graph
    infos: dict[str, NodeInfo]
    order: list[str]  # topological order (empty if the graph has a cycle)
    issues: list[Issue]
    structure: Structure
    prefix: str = ""

    @property
    def ok(self) -> bool:
        return not self.issues

    def raise_for_issues(self) -> None:
        if self.issues:
            raise GraphError(self.issues)


__all__ = ["CheckedGraph", "NodeInfo"]
