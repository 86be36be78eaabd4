"""Conditional: route the input to `true` or `false` by one condition."""

from nodeloom.conditions import check_condition, condition_parameters
from nodeloom.plugins.contract import NodeDefinition, Port

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
    parameters=condition_parameters(
        "Dotted path into the input (user.address.city, items.0.name); empty tests the "
        "input itself.",
        "user.address.city",
    ),
    side_effects="pure",
    check=check_condition,
)
