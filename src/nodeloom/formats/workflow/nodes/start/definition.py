from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="workflow-start",
    name="Workflow Start",
    category="formats",
    description="Where a start/agent/if/approval workflow begins: outputs the run's message "
    "as text, or its initial input when the run has no message.",
    icon="Play",
    inputs=(),
    outputs=(Port("output", description="the text the workflow starts from"),),
    parameters=(
        Parameter(
            "initial_input",
            "text",
            "Initial input",
            default="",
            description="The text to start from when the run has no message (`--input`)",
        ),
    ),
    trigger=True,
)
