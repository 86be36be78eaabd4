"""Ethan Tool: call a declared tool (`type: tool`)."""

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
    id="ethan-tool",
    name="Ethan Tool",
    category="formats",
    description="An Ethan `tool` node: renders its inputs, calls the tool it `uses` (a "
    "Python function, an HTTP request through the SSRF guard, or an MCP server's tool), "
    "then maps and routes with `result` = {status, json, text, items, result, error}. A "
    "result whose `error` is set fails the node.",
    icon="Wrench",
    execution_mode="hybrid",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The node: {"id", "tool": {"id", "kind", "impl", "config"}, "inputs", "map", "routes"}.'
        ),
        ROUTES,
    ),
    side_effects="external",
    check=check_spec,
)
