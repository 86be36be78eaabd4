from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="mark-external",
    name="Mark External",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(
        Parameter("path", "string", default=""),
        Parameter("seconds", "number", default=0.0),
    ),
    side_effects="external",
)
