"""The model parameters LLM nodes share, declared once (pure data: definitions import it)."""

from nodeloom.plugins.contract import Parameter

DEFAULT_MODEL = "openai:gpt-4o-mini"

MODEL = Parameter(
    "model",
    "string",
    "Model",
    default=DEFAULT_MODEL,
    hybrid=True,
    socket="model",
    description="provider:model, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, "
    "ollama:llama3.2, openai-compatible:<model> (with base_url); or wire a Model Selector",
)
TEMPERATURE = Parameter(
    "temperature", "number", "Temperature", minimum=0, maximum=2, hybrid=True, socket="float"
)
MAX_TOKENS = Parameter("max_tokens", "integer", "Max tokens", minimum=1)
BASE_URL = Parameter(
    "base_url",
    "string",
    "Base URL",
    description="Overrides the provider's base URL (e.g. OPENAI_BASE_URL)",
)
API_KEY = Parameter(
    "api_key",
    "string",
    "API key",
    description="Overrides the provider's key variable (e.g. OPENAI_API_KEY); "
    "prefer the environment: a key in a graph file is a secret in a file",
    secret=True,
)

MODEL_PARAMETERS = (MODEL, TEMPERATURE, MAX_TOKENS, BASE_URL, API_KEY)
