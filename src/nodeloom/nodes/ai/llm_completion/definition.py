from nodeloom.models.parameters import MODEL_PARAMETERS
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="llm-completion",
    name="LLM Completion",
    category="ai",
    description="One LLM call: prompt in, text out. Streams tokens as it writes.",
    icon="Sparkles",
    execution_mode="hybrid",
    inputs=(Port("input", required=False),),
    outputs=(Port("output", description='{"text", "usage", "model"}'),),
    parameters=(
        Parameter(
            "prompt",
            "text",
            "Prompt",
            hybrid=True,
            socket="string",
            description="Default: the spine input as text (its `text`, `message` or "
            "`response`, else JSON)",
        ),
        Parameter("system", "text", "System", hybrid=True, socket="string"),
        *MODEL_PARAMETERS,
    ),
    side_effects="idempotent",
    streaming=True,
    output_shape={"text": "string", "usage": "object", "model": "string"},
)
