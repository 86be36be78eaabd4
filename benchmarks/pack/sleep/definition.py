from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="sleep",
    name="Sleep",
    category="utility",
    description="Benchmark-only: awaits `seconds`, then passes its input on.",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(Parameter("seconds", "number", default=0.0),),
)
