from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="mark",
    name="Mark",
    category="data",
    description="Test fixture: sleeps, then appends its node id to a log file and outputs "
    "its input plus one (and its note, if any). The log counts executions across processes.",
    inputs=(Port("input", required=False),),
    outputs=(Port("output"),),
    parameters=(
        Parameter("log", "string", required=True),
        Parameter("seconds", "number", default=0.0),
        Parameter("size", "number", default=0),
        Parameter("note", "string", default=""),
        Parameter("token", "string", default="", secret=True),  # may hold a credential
    ),
    side_effects="idempotent",
)
