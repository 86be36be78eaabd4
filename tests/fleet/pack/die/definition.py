from nodeloom.plugins.contract import NodeDefinition, Port

definition = NodeDefinition(
    id="die",
    name="Die",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
)
