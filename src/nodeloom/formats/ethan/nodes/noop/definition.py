"""Ethan Noop: a node that only changes the state (`type: noop`)."""

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
    id="ethan-noop",
    name="Ethan Noop",
    category="formats",
    description="An Ethan `noop` node: applies its map (set, merge, delete) to the state, "
    "then takes its routes. Calls nothing.",
    icon="Eraser",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(spec_parameter('The node: {"id", "map", "routes"}.'), ROUTES),
    side_effects="pure",
    check=check_spec,
)
