"""Filter: split a list into the items that match a condition and those that do not."""

from nodeloom.conditions import OPERATORS, check_condition
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="filter",
    name="Filter",
    category="data",
    description="Tests one condition on each item of a list: matching items go to `pass`, "
    "the others to `reject`. A side with no items does not fire.",
    icon="Filter",
    inputs=(Port("input", description="A list of items (a single object is not wrapped)."),),
    outputs=(
        Port("pass", label="Pass", description="The items that match, in input order."),
        Port("reject", label="Reject", description="The items that do not match."),
    ),
    main_output="pass",
    parameters=(
        Parameter(
            "field",
            "string",
            "Field",
            description="Dotted path into each item (user.address.city, tags.0); "
            "empty tests the item itself.",
            placeholder="status",
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
