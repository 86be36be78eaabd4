"""Conditional: route the input to `true` or `false` by one condition."""

from nodeloom.conditions import OPERATORS, check_condition
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="conditional",
    name="Conditional",
    category="flow",
    description="Tests one condition on the input and passes the whole input to `true` "
    "or `false`; the other branch does not run.",
    icon="GitBranch",
    inputs=(Port("input", description="The value to test; passed on unchanged."),),
    outputs=(
        Port("true", label="True", description="The input, when the condition holds."),
        Port("false", label="False", description="The input, when it does not."),
    ),
    main_output="true",
    parameters=(
        Parameter(
            "field",
            "string",
            "Field",
            description="Dotted path into the input (user.address.city, items.0.name); "
            "empty tests the input itself.",
            placeholder="user.address.city",
        ),
        Parameter(
            "operator",
            "enum",
            "Operator",
            default="equals",
            options=OPERATORS,
            description="How to compare; see docs/conditions.md.",
        ),
        Parameter(
            "value",
            "json",
            "Value",
            description="What to compare with (any JSON scalar); ignored by exists, "
            "notExists, isEmpty and isNotEmpty.",
        ),
        Parameter(
            "caseSensitive",
            "boolean",
            "Case sensitive",
            default=True,
            description="When off, string operators and regex ignore case.",
        ),
    ),
    side_effects="pure",
    check=check_condition,
)
