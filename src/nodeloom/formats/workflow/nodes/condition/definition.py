"""Workflow If: the first condition that holds picks the branch; `false` when none does."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

OPERATORS = ("equal", "contains")


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    conditions = data.get("conditions")
    if conditions is None or (isinstance(conditions, str) and "{{" in conditions):
        return []
    if not isinstance(conditions, list):
        return [("conditions", 'conditions must be a list of {"operator", "value"}.')]
    issues: list[tuple[str, str]] = []
    for index, condition in enumerate(conditions):
        where = f"conditions[{index}]"
        if not isinstance(condition, Mapping):
            issues.append((where, 'a condition is {"operator": "equal" | "contains", "value"}.'))
            continue
        unknown = sorted(set(condition) - {"operator", "value"})
        if unknown:
            issues.append(
                (where, f"unknown field(s) {', '.join(unknown)}; fields: operator, value.")
            )
        if condition.get("operator", "equal") not in OPERATORS:
            issues.append(
                (
                    f"{where}.operator",
                    f"unknown operator {condition.get('operator')!r}; operators: equal, contains.",
                )
            )
        if not isinstance(condition.get("value", ""), str):
            issues.append((f"{where}.value", "the value is text."))
    return issues


definition = NodeDefinition(
    id="workflow-if",
    name="Workflow If",
    category="formats",
    description="Compares the previous output (as lower-case text) with each condition in "
    "turn (equal or contains, ignoring case and the value's surrounding spaces) and passes it "
    "on through the first condition that holds, else through `false`.",
    icon="Split",
    inputs=(Port("input", description="The previous output; passed on unchanged."),),
    outputs=(
        Port(
            "condition-{index}",
            label="Condition {index}",
            repeat="conditions",
            description="The input, when condition {index} is the first that holds.",
        ),
        Port("false", label="Else", description="The input, when no condition holds."),
    ),
    main_output="false",
    parameters=(
        Parameter(
            "conditions",
            "json",
            "Conditions",
            default=[{"operator": "equal", "value": ""}],
            description='List of {"operator": "equal" | "contains", "value": "..."}; condition '
            "i fires port condition-i. An empty value never holds.",
        ),
    ),
    side_effects="pure",
    check=check,
)
