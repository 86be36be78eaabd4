"""Incremental runs: what a run from a node takes as given (`flow.run(from_node=...,
outputs=...)`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nodeloom.errors import GraphError, Issue

if TYPE_CHECKING:
    from nodeloom.engine.topology import FlowPlan
    from nodeloom.graph.validation import CheckedGraph

Outputs = Mapping[str, Mapping[str, Any]]


def frozen_outputs(
    plan: FlowPlan, checked: CheckedGraph, from_node: str, supplied: Outputs
) -> dict[int, dict[str, Any] | None]:
    """What a run from `from_node` takes as given: every node not running, with the
    outputs `supplied` (node name -> {port: value}). Raises GraphError naming what is
    missing or unknown."""
    start = node_index(plan, from_node, "from")
    running = plan.descendants(start) | {start}
    given: dict[int, dict[str, Any]] = {}
    issues = []
    for name, ports in supplied.items():
        index = plan.names.get(name)
        if index is None:
            issues.append(
                Issue(
                    "invalid_outputs",
                    f"the outputs name a node '{name}' that is not in the graph",
                    node_id=name,
                )
            )
        elif not isinstance(ports, Mapping):
            issues.append(
                Issue(
                    "invalid_outputs",
                    f"the outputs of '{name}' must be an object of port -> value",
                    node_id=name,
                )
            )
        else:
            given[index] = dict(ports)
    needed: set[int] = set()
    for index in running:
        node = plan.nodes[index]
        needed.update(plan.edges[e].source for e in node.in_edges)
        needed.update(_referenced(plan, checked, node.id))
    for index in sorted(needed - running):
        if index not in given:
            node = plan.nodes[index]
            issues.append(
                Issue(
                    "missing_outputs",
                    f"running from '{from_node}' needs the "
                    f"outputs of '{node.name}'; add them to the outputs file "
                    "(an empty object if it fired nothing)",
                    node_id=node.id,
                )
            )
    if issues:
        raise GraphError(issues)
    return {i: given.get(i) for i in range(len(plan.nodes)) if i not in running}


def node_index(plan: FlowPlan, ref: str, what: str) -> int:
    """The plan index of node `ref` (an id or name). Raises GraphError (`unknown_node`,
    listing the nodes); `what` names its role in the message."""
    index = plan.names.get(ref)
    if index is None:
        names = ", ".join(sorted(n.name for n in plan.nodes))
        raise GraphError(
            [
                Issue(
                    "unknown_node",
                    f"the {what} node '{ref}' is not in the graph; nodes: {names}",
                    node_id=ref,
                )
            ]
        )
    return index


def _referenced(plan: FlowPlan, checked: CheckedGraph, node_id: str) -> set[int]:
    info = checked.infos[node_id]
    found = set()
    for template in info.templates.values():
        for ref in template.references:
            index = plan.names.get(ref)
            if index is not None:
                found.add(index)
    return found
