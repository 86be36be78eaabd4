from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="flaky",
    name="Flaky",
    category="data",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(
        Parameter("failures", "integer", default=1),
        Parameter("code", "string", default="flaky"),
    ),
)
