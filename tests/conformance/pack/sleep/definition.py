from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="sleep",
    name="Sleep",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(Parameter("seconds", "number", default=0.0), Parameter("value", "json")),
)
