"""The structural part of a graph (seed 003/004): agent clusters wired through `tools`.

An edge is *structural* when it enters a structural socket (`tools`, `agent`). A node has a
*structural role* when it is structural by definition (Toolset, MCP Server) or feeds a
structural edge (an Agent wired into another Agent's tools: a sub-agent). Structural-role
nodes are compiled in phase 1 and never scheduled as flow nodes.

Rules (each a located issue, reported before any token is spent):
- a structural-role node sits on no spine edge (`structural_on_spine`);
- a sub-agent has one parent (`multiple_parents`);
- sub-agents form no cycle (reported by the cycle check, with its path);
- a side wire into a structural-role node comes from a node known at build time
  (`structural_wire`): its value must exist before the flow starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from nodeloom.errors import Issue
from nodeloom.graph.definitions import DefinitionSpec
from nodeloom.graph.model import Edge, Graph
from nodeloom.graph.sockets import STRUCTURAL_SOCKETS

BUILD_MODES = frozenset({"structural", "hybrid"})


@dataclass(frozen=True, slots=True)
class Structure:
    """Which nodes and edges are structural, and what phase 1 builds, in order."""

    roles: frozenset[str]  # node ids with a structural role (not scheduled in the flow)
    edges: frozenset[str]  # edge ids of structural edges
    build_order: tuple[str, ...]  # every node with build() that phase 1 builds, children first

    def is_structural_edge(self, edge: Edge) -> bool:
        return edge.id in self.edges


def find_structure(
    graph: Graph,
    definitions: dict[str, DefinitionSpec | None],
    input_sockets: dict[str, dict[str, str]],
    order: list[str],
    prefix: str = "",
) -> tuple[Structure, list[Issue]]:
    """`definitions` by node id; `input_sockets` node id -> port -> socket type;
    `order` a topological order of the graph (empty if cyclic)."""
    issues: list[Issue] = []
    structural_edges: set[str] = set()
    roles: set[str] = set()
    for node in graph.nodes:
        definition = definitions.get(node.id)
        if definition is not None and definition.execution_mode == "structural":
            roles.add(node.id)
    parents: dict[str, list[Edge]] = {}
    for edge in graph.edges:
        socket = input_sockets.get(edge.target, {}).get(edge.target_handle)
        if socket in STRUCTURAL_SOCKETS:
            structural_edges.add(edge.id)
            roles.add(edge.source)
            parents.setdefault(edge.source, []).append(edge)
    for node_id, edges in parents.items():
        if len(edges) > 1 and _is_agent(definitions.get(node_id)):
            issues.append(
                Issue(
                    "multiple_parents",
                    f"sub-agent '{_name(graph, node_id)}' is wired into the tools of "
                    + ", ".join(f"'{_name(graph, e.target)}'" for e in edges)
                    + "; a sub-agent has one parent (duplicate the node for another parent)",
                    node_id=prefix + node_id,
                    field="agent",
                )
            )
    for edge in graph.edges:
        if edge.id in structural_edges:
            continue
        target_socket = input_sockets.get(edge.target, {}).get(edge.target_handle)
        into_role, from_role = edge.target in roles, edge.source in roles
        spine = target_socket == "data"
        if spine and (into_role or from_role):
            node_id = edge.target if into_role else edge.source
            issues.append(
                Issue(
                    "structural_on_spine",
                    f"'{_name(graph, node_id)}' is wired into an agent's tools, so it is compiled "
                    "into that agent and cannot also sit on the data spine; remove the spine edge "
                    "or the tools edge",
                    node_id=prefix + node_id,
                    edge_id=edge.id,
                )
            )
        elif (
            into_role
            and definitions.get(edge.source) is not None
            and (
                definitions[edge.source].execution_mode not in BUILD_MODES  # type: ignore[union-attr]
            )
        ):
            issues.append(
                Issue(
                    "structural_wire",
                    f"'{_name(graph, edge.target)}' is compiled before the flow runs, so its "
                    f"'{edge.target_handle}' cannot come from '{_name(graph, edge.source)}', which "
                    "only has a value during the flow; use a Model Selector or an inline value",
                    node_id=prefix + edge.target,
                    edge_id=edge.id,
                    field=edge.target_handle,
                )
            )
    builds = tuple(
        node_id
        for node_id in order
        if (
            definitions.get(node_id) is not None
            and definitions[node_id].execution_mode in BUILD_MODES
        )  # type: ignore[union-attr]
    )
    return Structure(frozenset(roles), frozenset(structural_edges), builds), issues


def _is_agent(definition: DefinitionSpec | None) -> bool:
    return definition is not None and any(p.socket == "agent" for p in definition.outputs)


def _name(graph: Graph, node_id: str) -> str:
    node = graph.by_id.get(node_id)
    return node.name if node else node_id
