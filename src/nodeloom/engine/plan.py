"""Pure planning rules: given what has happened, may a node run, and why not.

No I/O and no asyncio here: the run loop asks these predicates after every settled edge,
and they are the only place these rules live. Each rule is stated in docs/semantics.md and
tested in tests/conformance/.

An edge is *pending* until its source node finishes; it is then *delivered* (the source
fired the edge's port) or *dead* (the source did not fire that port, was skipped, or
failed under on_error=error_output).
"""

from __future__ import annotations

from typing import Any

from nodeloom.engine.topology import FlowPlan, PlannedEdge, PlannedNode
from nodeloom.expressions import MISSING


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


PENDING: Any = _Marker("PENDING")
DEAD: Any = _Marker("DEAD")


def edge_value(edge: PlannedEdge, outputs: dict[str, Any] | None) -> Any:
    """What an edge carries once its source has finished: the value of the port it leaves,
    or DEAD if the source did not fire that port (or was skipped: `outputs` is None)."""
    if outputs is not None and edge.source_port in outputs:
        return outputs[edge.source_port]
    return DEAD


def starts_each(edge: PlannedEdge, value: Any) -> bool:
    """An each-node runs once per value delivered on a spine edge into it, as it arrives;
    it never waits for its other edges (and a dead edge starts nothing)."""
    return value is not DEAD and edge.spine


def is_settled(node: PlannedNode, pending: list[int]) -> bool:
    """A node is considered once every incoming edge has delivered or died (a join)."""
    return pending[node.index] == 0


def skip_reason(
    plan: FlowPlan, node: PlannedNode, edge_values: list[Any], skipped: list[bool]
) -> str | None:
    """None if a settled node runs; otherwise why it is skipped.

    - A node with spine inputs runs only if every wired spine port got at least one
      delivery. Side sockets never keep it alive: a dead side wire only makes its
      parameter fall back to the expression or inline value.
    - A node fed only by side wires (no spine input) runs when each wired parameter
      got a delivery.
    - A node with no incoming edges (a trigger, a constant) always runs.
    """
    if node.spine_ports:
        for port, edges in node.spine_ports.items():
            for e in edges:
                if edge_values[e] is not DEAD:
                    break
            else:
                return _reason(plan, port, edges, skipped)
        return None
    if node.side_edges:
        by_port: dict[str, list[int]] = {}
        for e in node.side_edges:
            by_port.setdefault(plan.edges[e].target_port, []).append(e)
        for port, edges in by_port.items():
            if not _any_delivered(edges, edge_values):
                return _reason(plan, port, edges, skipped)
    return None


def uses_wire(edges: list[int], edge_values: list[Any]) -> int | None:
    """A parameter takes the value of the first wire into its side socket that delivered
    (in the order of the edges in the graph file): that edge, or None if none did, and
    the parameter falls back to its expression, inline value or default."""
    for e in edges:
        value = edge_values[e]
        if value is not DEAD and value is not PENDING:
            return e
    return None


def first_delivered(edges: list[int], edge_values: list[Any]) -> Any:
    """A spine port that takes one value gets the first value delivered to it (in the
    order of the edges in the graph file), or MISSING if none was."""
    for e in edges:
        value = edge_values[e]
        if value is not DEAD:
            return value
    return MISSING


def _any_delivered(edges: list[int], edge_values: list[Any]) -> bool:
    return any(edge_values[e] is not DEAD for e in edges)


def _reason(plan: FlowPlan, port: str, edges: list[int], skipped: list[bool]) -> str:
    causes = []
    for e in edges:
        edge = plan.edges[e]
        source = plan.nodes[edge.source]
        if skipped[source.index]:
            causes.append(f"'{source.name}' was skipped")
        else:
            causes.append(f"'{source.name}' did not fire '{edge.source_port}'")
    return f"no value arrived on '{port}': " + "; ".join(causes)
