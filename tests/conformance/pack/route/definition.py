from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="route",
    name="Route",
    category="flow",
    inputs=(Port("input", required=False),),
    outputs=(Port("a"), Port("b")),
    parameters=(Parameter("port", "enum", options=("a", "b", "both", "none"), default="a"),),
)
