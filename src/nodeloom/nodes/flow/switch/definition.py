"""Switch: route the input to the case ports whose condition holds, else `default`."""

from collections.abc import Mapping
from typing import Any

from nodeloom.conditions import check_condition
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    cases = data.get("cases")
    if cases is None or (isinstance(cases, str) and "{{" in cases):
        return []
    if not isinstance(cases, list):
        return [("cases", "cases must be a list of conditions {field, operator, value}.")]
    issues: list[tuple[str, str]] = []
    for index, case in enumerate(cases):
        issues.extend(check_condition(case, prefix=f"cases[{index}]."))
    return issues


definition = NodeDefinition(
    id="switch",
    name="Switch",
    category="flow",
    description="Tests a list of conditions on the input and passes the whole input to "
    "the first matching case port (mode first) or to every matching one (mode all); "
    "`default` fires when no case matched.",
    icon="Split",
    inputs=(Port("input", description="The value to test; passed on unchanged."),),
    outputs=(
        Port(
            "case-{index}",
            label="Case {index}",
            repeat="cases",
            description="The input, when case {index} matched.",
        ),
        Port("default", label="Default", description="The input, when no case matched."),
    ),
    main_output="default",
    parameters=(
        Parameter(
            "cases",
            "json",
            "Cases",
            default=[],
            description="List of conditions {field, operator, value, caseSensitive?}; "
            "case i fires port case-i. See docs/conditions.md.",
        ),
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="first",
            options=("first", "all"),
            description="first: only the first matching case fires; all: every matching "
            "case fires.",
        ),
    ),
    side_effects="pure",
    check=check,
)
