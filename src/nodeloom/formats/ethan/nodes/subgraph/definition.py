"""Ethan Subgraph: run one of the file's `subgraphs` (`type: subgraph`)."""

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
    id="ethan-subgraph",
    name="Ethan Subgraph",
    category="formats",
    description="An Ethan `subgraph` node (or a tool node using a `kind: subgraph` tool): "
    "runs the subgraph on a copy of the state plus its inputs, deep-merges the final "
    "state back (lists are not duplicated) and offers the declared outputs as "
    "`output.outputs` (and `output.<name>`).",
    icon="Workflow",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The node: {"id", "subgraph", "inputs", "declared_inputs", "outputs", "depth", '
            '"max_depth", "depth_exceeded", "timeout", "as_tool", "map", "routes"}.'
        ),
        ROUTES,
        Parameter(
            "graph",
            "graph",
            "Subgraph",
            description="The subgraph, converted (absent past --max-subgraph-depth: the "
            "node then fails with max_subgraph_depth when it runs).",
        ),
    ),
    side_effects="pure",
    check=check_spec,
)
