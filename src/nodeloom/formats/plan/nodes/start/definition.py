"""Plan Start: where a plan.json plan begins (seed 000)."""

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="plan-start",
    name="Plan Start",
    category="formats",
    description="Begins a plan.json plan: creates its threads in the run's state, the "
    "'main' thread holding the task (the run's message, else `task`).",
    icon="Play",
    inputs=(),
    outputs=(Port("output", description='{"task"}'),),
    parameters=(
        Parameter(
            "task",
            "text",
            "Task",
            default="",
            description="The task when the run has no message (a pattern's `task`)",
        ),
    ),
    trigger=True,
    output_shape={"task": "string"},
)
