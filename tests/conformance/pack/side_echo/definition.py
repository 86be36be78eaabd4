from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="side-echo",
    name="Side Echo",
    category="data",
    inputs=(Port("input"),),
    outputs=(Port("output"),),
    parameters=(
        Parameter("temperature", "number", default=0.5, hybrid=True, socket="float"),
        Parameter("label", "string", default="inline", hybrid=True),
    ),
)
