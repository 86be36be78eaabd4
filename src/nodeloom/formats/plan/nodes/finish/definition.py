"""Plan Finish: where a plan.json plan ends and its result is made (seed 000)."""

from nodeloom.plugins.contract import NodeDefinition, Port

definition = NodeDefinition(
    id="plan-finish",
    name="Plan Finish",
    category="formats",
    description="Ends a plan.json plan: sets the run's result {content, threads, data_out, "
    "tokens_usage} and outputs the last node's content.",
    icon="Flag",
    inputs=(Port("input", description="The last plan node's output"),),
    outputs=(Port("output", description='{"content"}'),),
    output_shape={"content": "any"},
)
