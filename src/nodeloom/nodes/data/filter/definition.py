"""Filter: split a list into the items that match a condition and those that do not."""

from nodeloom.conditions import check_condition, condition_parameters
from nodeloom.plugins.contract import NodeDefinition, Port

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
    parameters=condition_parameters(
        "Dotted path into each item (user.address.city, tags.0); empty tests the item itself.",
        "status",
    ),
    side_effects="pure",
    check=check_condition,
)
