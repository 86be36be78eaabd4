from nodeloom.plugins.contract import NodeDefinition, Port

definition = NodeDefinition(
    id="announce",
    name="Announce",
    category="flow",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    interactive=True,
)
