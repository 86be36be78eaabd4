from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="number",
    name="Number",
    category="utility",
    inputs=(),
    outputs=(Port("value", socket="float"),),
    parameters=(Parameter("value", "number", default=0.0),),
)
