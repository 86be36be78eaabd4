"""Aggregate: group a list by a field and count, sum, average, bound or collect."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

OPERATIONS = ("count", "sum", "min", "max", "avg", "list")
DEFAULT_OPERATIONS = [{"op": "count"}]


def result_key(field: str, op: str) -> str:
    """Where an operation's result goes in each output object."""
    return f"{field}_{op}" if field else op


def check_aggregate(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues = _check_operations(data)
    if data.get("collect") is True and data.get("activation") != "each":
        issues.append(
            (
                "collect",
                "collect gathers the values that arrive one by one at an each-node: set "
                "activation to each, or turn collect off",
            )
        )
    return issues


def _check_operations(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    operations = data.get("operations")
    if operations is None or (isinstance(operations, str) and "{{" in operations):
        return []
    example = '[{"op": "count"}, {"field": "amount", "op": "sum"}]'
    if not isinstance(operations, list) or not operations:
        return [("operations", f"operations must be a non-empty list such as {example}")]
    issues: list[tuple[str, str]] = []
    keys: dict[str, int] = {}
    for index, operation in enumerate(operations):
        if not isinstance(operation, Mapping):
            issues.append(("operations", f"operation {index} must be an object such as {example}"))
            continue
        op, field = operation.get("op"), operation.get("field") or ""
        unknown = sorted(set(operation) - {"op", "field"})
        if unknown:
            issues.append(
                ("operations", f"operation {index} has unknown keys {unknown}; use field and op")
            )
        if op not in OPERATIONS:
            issues.append(
                (
                    "operations",
                    f"operation {index}: op must be one of {', '.join(OPERATIONS)}; got {op!r}",
                )
            )
            continue
        if not isinstance(field, str):
            issues.append(("operations", f"operation {index}: field must be a dotted path"))
            continue
        key = result_key(field, op)
        if key in keys:
            issues.append(
                ("operations", f"operations {keys[key]} and {index} both produce {key!r}")
            )
        keys[key] = index
    group_by = data.get("group_by")
    if isinstance(group_by, str) and group_by and group_by in keys:
        issues.append(("group_by", f"group_by {group_by!r} clashes with an operation's result"))
    return issues


definition = NodeDefinition(
    id="aggregate",
    name="Aggregate",
    category="data",
    description="Groups a list of items by a field (in first-seen order) and computes "
    "count, sum, min, max, avg or list per group; without group_by, over the whole list.",
    icon="Sigma",
    inputs=(Port("input", description="A list of items (objects, or plain values)."),),
    outputs=(
        Port(
            "output",
            description="With group_by: a list of one object per group; without: one object.",
        ),
    ),
    parameters=(
        Parameter(
            "group_by",
            "string",
            "Group by",
            default="",
            placeholder="customer.country",
            description="Dotted path of the field whose value forms the groups; empty: "
            "one result over the whole list.",
        ),
        Parameter(
            "operations",
            "json",
            "Operations",
            default=DEFAULT_OPERATIONS,
            description='A list of {"field"?, "op"}; op is count, sum, min, max, avg or '
            'list. Results go under "<field>_<op>" ("count" for a count without field).',
        ),
        Parameter(
            "collect",
            "boolean",
            "Collect",
            default=False,
            description="With activation each: every arriving value (a list: its items) is "
            "added to those that arrived before in this run, and the output aggregates them "
            "all.",
        ),
    ),
    side_effects="pure",
    output_shape={"<group_by>": "any", "<field>_<op>": "number | list", "count": "int"},
    check=check_aggregate,
)
