from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="const",
    name="Const",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(Parameter("value", "json"),),
)
