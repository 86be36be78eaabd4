"""What a node receives when it runs: values on its spine inputs, and its parameters
(wire > expression > inline value > default); and the trigger a run receives. The rules
are planning's (`nodeloom.engine.plan`); this module applies them to one execution."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.engine.plan import DEAD, first_delivered, uses_wire
from nodeloom.engine.topology import FlowPlan, PlannedNode
from nodeloom.errors import CoercionError, ExpressionError, ExpressionEvalError
from nodeloom.expressions import MISSING
from nodeloom.expressions.scope import Scope
from nodeloom.graph.coercion import coerce
from nodeloom.plugins.contract import DataValue


def spine_inputs(
    node: PlannedNode, edge_values: list[Any], entry: Any
) -> tuple[dict[str, DataValue], Any]:
    """Values on the node's spine inputs and the value `$json` stands for (the first
    port's). A port that takes several values (`multiple`) gets the list of every value
    delivered to it, in edge order; any other port the first delivered value, and no
    value if none was. `entry` (an inner graph's item) feeds a node with no incoming
    edge."""
    inputs: dict[str, DataValue] = {}
    first: Any = MISSING
    for port, edges in node.spine_ports.items():
        if port in node.multiple_ports:
            value = []  # a loop, not a comprehension: no function object per node
            for e in edges:
                if (delivered := edge_values[e]) is not DEAD:
                    value.append(delivered)
            inputs[port] = DataValue("array", value)
        else:
            value = first_delivered(edges, edge_values)
            if value is MISSING:
                continue
            inputs[port] = DataValue("data", value)
        if first is MISSING:
            first = value
    if entry is not MISSING and not node.in_edges:
        if any(p.id == "input" for p in node.definition.inputs):
            inputs["input"] = DataValue("data", entry)
        first = entry
    return inputs, first


def parameters(
    plan: FlowPlan, node: PlannedNode, edge_values: list[Any], scope: Scope
) -> dict[str, Any]:
    """Parameters: wire > expression > inline value > default. Raises CoercionError (a
    wired value does not fit) or ExpressionEvalError (an expression failed)."""
    data = dict(node.static)
    for parameter in node.dynamic:
        e = uses_wire(parameter.wires, edge_values) if parameter.wires else None
        if e is not None:
            edge = plan.edges[e]
            try:
                data[parameter.id] = coerce(edge_values[e], edge.source_socket, edge.target_socket)
            except CoercionError as exc:
                raise CoercionError(f"the wire into '{parameter.id}': {exc}") from None
            continue
        if parameter.render is None:
            continue
        try:
            data[parameter.id] = parameter.render(scope)
        except ExpressionError as exc:
            raise ExpressionEvalError(f"parameter '{parameter.id}': {exc}") from None
    return data


def trigger_data(message: Any, trigger: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trigger a run gets: `trigger` with `message` as its `message`."""
    data = dict(trigger or {})
    if message is not None or "message" not in data:
        data["message"] = "" if message is None else message
    return data
