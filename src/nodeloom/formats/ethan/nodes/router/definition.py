"""Ethan Router: JsonLogic cases, all matching ones fire (`type: router`)."""

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
    id="ethan-router",
    name="Ethan Router",
    category="formats",
    description="An Ethan `router` node: every case whose JsonLogic `when` holds fires "
    "(fan-out); if none does, its `default`; without a default, its own edges.",
    icon="Split",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The node: {"id", "routes"}; routes of kind "case" (with `when`), "default" and "edge".'
        ),
        ROUTES,
    ),
    side_effects="pure",
    check=check_spec,
)
