"""Validation: every problem in a graph, located, in one pass.

`check_graph` returns a `CheckedGraph` (definitions resolved, ports expanded, expressions
compiled, topological order) together with the list of `Issue`s. The engine compiles its
run plan from a `CheckedGraph` without analysing the graph again.

The checks live beside it: `node_checks`, `edge_checks`, `ordering` (order, cycles,
ancestors) and `references` (expressions); this module runs them in order and checks
inner graphs (a Loop body) with the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.errors import Issue
from nodeloom.graph.checked import CheckedGraph, NodeInfo
from nodeloom.graph.credential_placement import credential_placement_issues
from nodeloom.graph.definitions import Definitions
from nodeloom.graph.document import parse_graph, read_document
from nodeloom.graph.edge_checks import check_activation, check_edges, check_required
from nodeloom.graph.model import Graph
from nodeloom.graph.node_checks import check_names, check_node
from nodeloom.graph.ordering import topological_order, upstream_of
from nodeloom.graph.references import check_references
from nodeloom.graph.root_agent import check_user_tools
from nodeloom.graph.structure import find_structure


def validate(source: Any, registry: Definitions) -> CheckedGraph:
    """Read, parse and check a graph document (path, JSON text or dict)."""
    graph, issues = parse_graph(read_document(source))
    checked = check_graph(graph, registry)
    checked.issues[:0] = issues
    return checked


def check_graph(
    graph: Graph,
    registry: Definitions,
    *,
    prefix: str = "",
    outer_names: Mapping[str, str] | None = None,
    extra_roots: frozenset[str] = frozenset(),
) -> CheckedGraph:
    """Check a parsed graph. `prefix`, `outer_names` and `extra_roots` are set when
    checking an inner graph (a Loop body): issues are located as `loop/inner`, nodes of
    the outer graph upstream of the container may be referenced, and `$loop` exists."""
    issues: list[Issue] = []
    infos = {node.id: check_node(node, registry, prefix, issues) for node in graph.nodes}
    check_names(graph, prefix, issues)
    issues.extend(credential_placement_issues(infos, prefix))
    for info in infos.values():
        for param, value in info.node.data.items():
            parameter = info.definition.parameter(param) if info.definition else None
            if parameter is not None and parameter.type == "graph" and isinstance(value, dict):
                info.bodies[param] = _check_body(
                    graph, info, param, value, registry, prefix, outer_names, issues
                )
    incoming = check_edges(graph, infos, prefix, issues)
    check_required(infos, incoming, prefix, issues)
    each = {n.id for n in graph.nodes if n.data.get("activation") == "each"}
    check_activation(graph, infos, each, prefix, issues)
    order, cyclic = topological_order(graph, each)
    if cyclic:
        issues.append(
            Issue(
                "cycle",
                "the flow graph has a cycle of nodes that wait for all their inputs, through "
                + " -> ".join(f"'{n}'" for n in cyclic)
                + "; repetition is done with a Loop node, whose body holds the repeated steps, "
                "or with nodes whose activation is `each` (every node of the cycle)",
                node_id=prefix + cyclic[0],
            )
        )
    structure, structural_issues = find_structure(
        graph,
        {node_id: info.definition for node_id, info in infos.items()},
        {
            node_id: {p: port.socket for p, port in info.inputs.items()}
            for node_id, info in infos.items()
        },
        order if not cyclic else [],
        prefix,
    )
    issues.extend(structural_issues)
    issues.extend(check_user_tools(graph, structure, prefix))
    if not cyclic:
        check_references(
            graph, infos, order, prefix, outer_names or {}, extra_roots, structure, issues
        )
    return CheckedGraph(graph, infos, [] if cyclic else order, issues, structure, prefix)


def _check_body(
    graph: Graph,
    info: NodeInfo,
    param: str,
    value: dict[str, Any],
    registry: Definitions,
    prefix: str,
    outer_names: Mapping[str, str] | None,
    issues: list[Issue],
) -> CheckedGraph:
    where = f"{prefix}{info.node.id}/"
    body, body_issues = parse_graph(value)
    for issue in body_issues:
        issues.append(
            Issue(
                issue.code,
                f"in {param}: {issue.message}",
                node_id=where + issue.node_id if issue.node_id else prefix + info.node.id,
                field=issue.field or param,
                edge_id=issue.edge_id,
            )
        )
    # Outer nodes the body may reference: every outer node upstream of the container.
    upstream = upstream_of(graph, info.node.id)
    visible = dict(outer_names or {})
    for node in graph.nodes:
        if node.id in upstream:
            visible[node.name] = node.id
            visible[node.id] = node.id
    checked = check_graph(
        body, registry, prefix=where, outer_names=visible, extra_roots=frozenset({"$loop"})
    )
    issues.extend(checked.issues)
    if not body.nodes:
        issues.append(
            Issue(
                "invalid_parameter",
                f"the {param} has no nodes",
                node_id=prefix + info.node.id,
                field=param,
            )
        )
    return checked


__all__ = ["CheckedGraph", "NodeInfo", "check_graph", "validate"]
