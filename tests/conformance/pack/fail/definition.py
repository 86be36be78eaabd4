from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="fail",
    name="Fail",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"), Port("other")),
    parameters=(Parameter("message", "string", default="boom"),),
)
