"""Ethan Loop: run a body node again and again (`type: loop`)."""

from nodeloom.formats.ethan.catalogue import (
    INPUT,
    RESULT,
    ROUTE,
    ROUTES,
    check_spec,
    spec_parameter,
)
from nodeloom.plugins.contract import NodeDefinition, Parameter

definition = NodeDefinition(
    id="ethan-loop",
    name="Ethan Loop",
    category="formats",
    description="An Ethan `loop` node: runs its body node (a copy held in `body`) up to "
    "max_iterations times, until its JsonLogic `until` holds; then takes its routes. "
    "Without `until` it runs max_iterations times and goes on.",
    icon="Repeat",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The node: {"id", "body", "until", "max_iterations", "body_on_error", "routes"}; '
            'a route of kind "body_error" leads to the body\'s on_error.to.'
        ),
        ROUTES,
        Parameter(
            "body",
            "graph",
            "Body",
            required=True,
            description="An inner graph holding the body node, run once per iteration.",
        ),
    ),
    side_effects="pure",
    check=check_spec,
)
