from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="merge",
    name="Merge",
    category="flow",
    description="Waits for every incoming branch to deliver or be proven dead, then fires "
    "once with what arrived, in the order of its incoming edges in the graph file.",
    icon="Merge",
    inputs=(Port("input", multiple=True, description="Any number of edges"),),
    outputs=(Port("output"),),
    parameters=(
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="list",
            options=("list", "object"),
            description="list: [values in edge order]; object: {source node name: value}",
        ),
    ),
)
