from nodeloom.models.parameters import BASE_URL, DEFAULT_MODEL
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="model-selector",
    name="Model Selector",
    category="utility",
    description="One model for many nodes: wire its `model` socket into the model of every "
    "LLM node and Agent that should use it.",
    icon="Cpu",
    execution_mode="hybrid",
    inputs=(),
    outputs=(
        Port("model", socket="model", description='{"model": "provider:model", "base_url"?}'),
    ),
    parameters=(
        Parameter(
            "model",
            "string",
            "Model",
            default=DEFAULT_MODEL,
            required=True,
            description="provider:model, e.g. openai:gpt-4o-mini",
        ),
        BASE_URL,
    ),
)
