"""Ethan On Error: where a failed node's run goes on (its `on_error`)."""

from nodeloom.formats.ethan.catalogue import (
    INPUT,
    RESULT,
    ROUTE,
    ROUTES,
    check_spec,
    spec_parameter,
)
from nodeloom.plugins.contract import NodeDefinition

definition = NodeDefinition(
    id="ethan-on-error",
    name="Ethan On Error",
    category="formats",
    description="Added for an Ethan node with `on_error`: receives the node's error (on "
    "the node's `error` port) and routes to `on_error.to` and, with `resume: true`, along "
    'the node\'s own routes, their conditions seeing `result` = {"error": ...}.',
    icon="LifeBuoy",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The failed node and where to go: {"id", "type", "on_error", "routes"}; '
            'routes of kind "error_to" always fire, the others as the node\'s would.'
        ),
        ROUTES,
    ),
    side_effects="pure",
    check=check_spec,
)
