"""Every rule of seed 002 a workflow must keep, checked before anything runs.

Each broken rule is a located `Issue` (node id, connection id, field); all are collected
in one pass. The subagent rules (`subagents.py`) are checked with the rest, on the file, so
an invalid subagent tree is refused before any model is called (the original checked them
when the parent agent was about to run, after earlier agents had spent tokens).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.workflow.document import Connection, Workflow, WorkflowNode, kind
from nodeloom.formats.workflow.subagents import subagent_issues

NODE_TYPES = ("start", "agent", "if", "approval")
OPERATORS = ("equal", "contains")
TOOLS = ("web_search", "subagents")


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _object(value: Any) -> bool:
    return isinstance(value, dict)


def _list(value: Any) -> bool:
    return isinstance(value, list)


# The data fields of each node type: field -> (check, what it must be). `None` is "unset".
FIELDS: dict[str, dict[str, tuple[Callable[[Any], bool], str]]] = {
    "start": {"initialInput": (_str, "text")},
    "agent": {
        "agentName": (_str, "text"),
        "systemPrompt": (_str, "text"),
        "userPrompt": (_str, "text"),
        "model": (_str, "a model name such as 'gpt-5' (or 'provider:model')"),
        "reasoningEffort": (_str, "text such as 'low', 'medium' or 'high'"),
        "tools": (_object, 'an object such as {"web_search": true}'),
    },
    "if": {"conditions": (_list, "a list of conditions")},
    "approval": {"prompt": (_str, "text")},
}
COMMON_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "collapsed": (_bool, "true or false")
}


def check_workflow(workflow: Workflow) -> list[Issue]:
    """Every problem of a (normalized) workflow."""
    issues: list[Issue] = []
    nodes = workflow.by_id
    for node in workflow.nodes:
        issues.extend(_node_issues(node))
    issues.extend(_start_issues(workflow))
    for connection in workflow.connections:
        issues.extend(_connection_issues(connection, nodes))
    issues.extend(subagent_issues(workflow))
    return issues


# -- nodes ---------------------------------------------------------------------------------


def _node_issues(node: WorkflowNode) -> list[Issue]:
    if node.type not in NODE_TYPES:
        return [
            Issue(
                "unknown_node_type",
                f"unknown node type '{node.type}'{did_you_mean(node.type, NODE_TYPES)}; a "
                "workflow's node types are start, agent, if and approval (input is the old "
                "name of approval)",
                node_id=node.id,
                field="type",
            )
        ]
    issues = []
    fields = {**FIELDS[node.type], **COMMON_FIELDS}
    for key, value in node.data.items():
        if key == "condition" and node.type == "if":
            if not isinstance(value, str):  # a text one was turned into `conditions`
                message = f"must be text (the old single condition), got {kind(value)}"
                issues.append(_invalid(node, "data.condition", message))
            continue
        if key not in fields:
            issues.append(
                Issue(
                    "unknown_parameter",
                    f"{'a' if node.type == 'start' else 'an'} {node.type} node has no field '{key}'"
                    f"{did_you_mean(key, fields)}; its fields: {', '.join(fields)}",
                    node_id=node.id,
                    field=f"data.{key}",
                )
            )
            continue
        check, what = fields[key]
        if value is not None and not check(value):
            issues.append(_invalid(node, f"data.{key}", f"must be {what}, got {kind(value)}"))
    if node.type == "agent" and isinstance(node.data.get("tools"), dict):
        issues.extend(_tools_issues(node, node.data["tools"]))
    if node.type == "if" and isinstance(node.data.get("conditions"), list):
        issues.extend(_conditions_issues(node, node.data["conditions"]))
    return issues


def _tools_issues(node: WorkflowNode, tools: dict[str, Any]) -> list[Issue]:
    issues = []
    for key, value in tools.items():
        if key not in TOOLS:
            issues.append(
                Issue(
                    "unknown_parameter",
                    f"unknown tool '{key}'{did_you_mean(key, TOOLS)}; an agent's tools are "
                    f"{' and '.join(TOOLS)}",
                    node_id=node.id,
                    field=f"data.tools.{key}",
                )
            )
        elif value is not None and not isinstance(value, bool):
            issues.append(
                _invalid(node, f"data.tools.{key}", f"must be true or false, got {kind(value)}")
            )
    return issues


def _conditions_issues(node: WorkflowNode, conditions: list[Any]) -> list[Issue]:
    issues = []
    for index, condition in enumerate(conditions):
        where = f"data.conditions[{index}]"
        if not isinstance(condition, dict):
            issues.append(
                _invalid(
                    node,
                    where,
                    'must be an object {"operator": "equal" | "contains", "value": "..."}, '
                    f"got {kind(condition)}",
                )
            )
            continue
        for key in condition:
            if key not in ("operator", "value"):
                issues.append(
                    Issue(
                        "unknown_parameter",
                        f"a condition has no field '{key}'; its fields: operator, value",
                        node_id=node.id,
                        field=f"{where}.{key}",
                    )
                )
        operator = condition.get("operator")
        if operator is not None and operator not in OPERATORS:
            issues.append(
                _invalid(
                    node,
                    f"{where}.operator",
                    f"unknown operator {operator!r}"
                    f"{did_you_mean(str(operator), OPERATORS)}; operators: equal, contains",
                )
            )
        value = condition.get("value")
        if value is not None and not isinstance(value, str):
            issues.append(
                _invalid(
                    node,
                    f"{where}.value",
                    f"must be text (compared with the previous output as text), got {kind(value)}",
                )
            )
    return issues


def _start_issues(workflow: Workflow) -> list[Issue]:
    starts = [node for node in workflow.nodes if node.type == "start"]
    if not starts:
        return [
            Issue(
                "start_node_missing",
                "the workflow has no start node; add one (type 'start') and connect it to the "
                "first step",
                field="nodes",
            )
        ]
    return [
        Issue(
            "start_node_duplicate",
            f"the workflow has {len(starts)} start nodes; it must have exactly one: keep "
            f"'{starts[0].id}' and remove this one",
            node_id=node.id,
            field="type",
        )
        for node in starts[1:]
    ]


# -- connections ---------------------------------------------------------------------------


def source_handles(node: WorkflowNode) -> list[str] | None:
    """The execution handles a node may fire (None: unknown, its data is invalid)."""
    if node.type in ("start", "agent"):
        return ["output"]
    if node.type == "approval":
        return ["approve", "reject"]
    if node.type == "if":
        conditions = node.data.get("conditions")
        if not isinstance(conditions, list):
            return None
        return [*(f"condition-{i}" for i in range(len(conditions))), "false"]
    return None


def _connection_issues(connection: Connection, nodes: dict[str, WorkflowNode]) -> list[Issue]:
    issues = []
    for end in ("source", "target"):
        node_id = getattr(connection, end)
        if node_id not in nodes:
            issues.append(
                Issue(
                    "dangling_edge",
                    f"the connection's {end} '{node_id}' is not a node of this workflow"
                    f"{did_you_mean(node_id, nodes)}",
                    edge_id=connection.id,
                    field=end,
                )
            )
    if issues or connection.is_subagent:
        return issues  # subagent links: see subagent_issues
    source, target = nodes[connection.source], nodes[connection.target]
    valid = source_handles(source)
    handle = connection.source_handle
    if valid is not None and handle not in valid and not (handle is None and "output" in valid):
        extra = " (and 'subagent' for a subagent link)" if source.type == "agent" else ""
        issues.append(
            Issue(
                "unknown_handle",
                f"the {source.type} node '{source.id}' has no output handle "
                f"{_handle(handle)}; its handles: {', '.join(valid)}{extra}",
                node_id=source.id,
                edge_id=connection.id,
                field="sourceHandle",
            )
        )
    if target.type == "start":
        issues.append(
            Issue(
                "unknown_handle",
                f"the start node '{target.id}' has no input: the workflow begins there",
                node_id=target.id,
                edge_id=connection.id,
                field="target",
            )
        )
    elif connection.target_handle not in (None, "input"):
        issues.append(
            Issue(
                "unknown_handle",
                f"the {target.type} node '{target.id}' has no input handle "
                f"'{connection.target_handle}'; its input handle: input",
                node_id=target.id,
                edge_id=connection.id,
                field="targetHandle",
            )
        )
    return issues


# -- messages ------------------------------------------------------------------------------


def _handle(handle: str | None) -> str:
    return "(none given)" if handle is None else f"'{handle}'"


def _invalid(node: WorkflowNode, field: str, message: str) -> Issue:
    return Issue(
        "invalid_parameter", f"{node.type} node '{node.id}': {field} {message}", node.id, field
    )


def did_you_mean(value: str, options: Any) -> str:
    match = difflib.get_close_matches(value, list(options), n=1)
    return f"; did you mean '{match[0]}'?" if match else ""
