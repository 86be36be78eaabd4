"""Node checks: a node's type, parameters, settings and ports; names unique in a graph."""

from __future__ import annotations

import difflib

from nodeloom.errors import Issue
from nodeloom.graph.checked import NodeInfo
from nodeloom.graph.definitions import ERROR_PORT, Definitions, Port
from nodeloom.graph.model import Graph, Node
from nodeloom.graph.parameters import (
    SETTINGS,
    check_value,
    compile_templates,
    pinned_issues,
    settings_issues,
)


def check_node(node: Node, registry: Definitions, prefix: str, issues: list[Issue]) -> NodeInfo:
    where = prefix + node.id
    definition = registry.definition(node.type)
    info = NodeInfo(node, definition)
    if definition is None:
        issues.append(
            Issue(
                "unknown_node_type",
                registry.unknown_type_message(node.type),
                node_id=where,
                field="type",
            )
        )
        return info
    for parameter_id, value in node.data.items():
        parameter = definition.parameter(parameter_id)
        if parameter is None and parameter_id not in SETTINGS:
            valid = [p.id for p in definition.parameters] + sorted(SETTINGS)
            hint = difflib.get_close_matches(parameter_id, valid, n=1)
            suggestion = f"did you mean '{hint[0]}'? " if hint else ""
            issues.append(
                Issue(
                    "unknown_parameter",
                    f"'{definition.id}' has no parameter '{parameter_id}'; {suggestion}"
                    f"valid parameters: {', '.join(valid)}",
                    node_id=where,
                    field=parameter_id,
                )
            )
            continue
        if parameter is not None and parameter.type != "graph":
            for message in check_value(parameter, value):
                issues.append(
                    Issue("invalid_parameter", message, node_id=where, field=parameter_id)
                )
    issues.extend(settings_issues(node.data, where, definition))
    if definition.check is not None:
        reported = {i.field for i in issues if i.node_id == where}
        for field_name, message in definition.check(node.data):
            if field_name not in reported:  # one issue per field: the first is the clearest
                issues.append(Issue("invalid_parameter", message, node_id=where, field=field_name))
    info.templates, syntax_errors = compile_templates(definition, node.data)
    for field_name, exc in syntax_errors:
        issues.append(Issue("expression_syntax", str(exc), node_id=where, field=field_name))
    info.inputs = {port.id: port for port in definition.inputs}
    for parameter in definition.parameters:
        if parameter.hybrid:
            info.inputs[parameter.id] = Port(
                parameter.id, parameter.socket_type, parameter.label, required=False
            )
    info.outputs = {port.id: port for port in definition.output_ports(node.data)}
    if node.data.get("on_error") == "error_output" and ERROR_PORT not in info.outputs:
        info.outputs[ERROR_PORT] = Port(ERROR_PORT, "data", "Error")
    issues.extend(pinned_issues(node.data, where, info.outputs))
    return info


def check_names(graph: Graph, prefix: str, issues: list[Issue]) -> None:
    by_name: dict[str, str] = {}
    ids = {node.id for node in graph.nodes}
    for node in graph.nodes:
        name = node.data.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            issues.append(
                Issue(
                    "invalid_parameter",
                    "'name' must be a non-empty string",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
            continue
        shown = node.name
        if shown in by_name:
            issues.append(
                Issue(
                    "duplicate_node_name",
                    f"the name '{shown}' is already used by node '{by_name[shown]}'; names are "
                    "unique in a graph because expressions reach nodes by name",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
        elif shown != node.id and shown in ids:
            issues.append(
                Issue(
                    "duplicate_node_name",
                    f"the name '{shown}' is the id of another node; expressions could not tell "
                    "them apart",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
        by_name[shown] = node.id
