from nodeloom.models.parameters import API_KEY, BASE_URL
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="workflow-agent",
    name="Workflow Agent",
    category="formats",
    description="A workflow's agent step: sends its user prompt (by default the previous "
    "output) to the model with its system prompt and passes the reply text on. Other "
    "workflow agents wired into `tools` are subagents it can call as tools.",
    icon="Bot",
    execution_mode="hybrid",
    inputs=(
        Port("input", required=False, description="The previous output (text)"),
        Port(
            "tools",
            socket="tools",
            required=False,
            multiple=True,
            description="Subagents (Workflow Agents), Toolsets, MCP Servers",
        ),
    ),
    outputs=(
        Port("output", description="The reply text"),
        Port(
            "agent",
            socket="agent",
            label="As subagent",
            description="Wire into another Workflow Agent's tools to make this its subagent",
        ),
    ),
    parameters=(
        Parameter(
            "system_prompt",
            "text",
            "System prompt",
            default="You are a helpful assistant.",
        ),
        Parameter(
            "user_prompt",
            "text",
            "User prompt",
            description="What to send; {{ $json }} is the previous output. Empty: the "
            "previous output itself",
        ),
        Parameter(
            "model",
            "string",
            "Model",
            default="openai:gpt-5",
            description="provider:model, e.g. openai:gpt-5, anthropic:claude-sonnet-4-5",
        ),
        Parameter(
            "reasoning_effort",
            "string",
            "Reasoning effort",
            description="low, medium, high, ...: sent to OpenAI-protocol models; other "
            "providers ignore it",
        ),
        Parameter(
            "web_search",
            "boolean",
            "Web search",
            default=False,
            description="Give the agent the http_fetch tool: it fetches a URL it knows "
            "(public addresses only); it is not a search engine",
        ),
        Parameter(
            "subagents",
            "boolean",
            "Subagents",
            default=False,
            description="Let the agent call the Workflow Agents wired into its tools",
        ),
        BASE_URL,
        API_KEY,
    ),
    side_effects="external",
    streaming=True,
)
