"""JSON Transform: reshape the input with a JSONata expression."""

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="json-transform",
    name="JSON Transform",
    category="data",
    description="Evaluates a JSONata expression against the input and outputs the result "
    "(null when the expression matches nothing).",
    icon="Braces",
    inputs=(Port("input", description="The JSON value the expression reads as `$`."),),
    outputs=(Port("output", description="The expression's result, or null."),),
    parameters=(
        Parameter(
            "expression",
            "code",
            "Expression",
            required=True,
            language="jsonata",
            description="A JSONata expression (https://docs.jsonata.org), e.g. "
            '`{"name": user.name, "total": $sum(items.price)}`.',
            placeholder="$",
        ),
    ),
    side_effects="pure",
)
