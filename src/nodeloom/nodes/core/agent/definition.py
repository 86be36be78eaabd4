from nodeloom.models.parameters import MODEL_PARAMETERS
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="agent",
    name="Agent",
    category="core",
    description="An LLM agent with tools. Wire Toolsets, MCP Servers and other Agents into "
    "its `tools` socket: the cluster compiles into one Agno Agent (or a Team when sub-agents "
    "are wired) before the flow runs. In the flow it answers its input.",
    icon="Bot",
    execution_mode="hybrid",
    inputs=(
        Port("input", required=False),
        Port(
            "tools",
            socket="tools",
            required=False,
            multiple=True,
            description="Toolsets, MCP Servers, sub-Agents",
        ),
    ),
    outputs=(
        Port("output", description='{"response", "model", "tokens_used"}'),
        Port(
            "agent",
            socket="agent",
            label="As sub-agent",
            description="Wire into another Agent's tools to make this a sub-agent",
        ),
    ),
    parameters=(
        Parameter("instructions", "text", "Instructions", hybrid=True, socket="string"),
        Parameter(
            "prompt",
            "text",
            "Prompt",
            description="What to ask; default: the spine "
            "input as text (its `text`, `message` or `response`, else JSON)",
        ),
        *MODEL_PARAMETERS,
        Parameter(
            "description",
            "text",
            "Description",
            description="What this agent does; a team leader reads it to pick a sub-agent",
        ),
        Parameter(
            "team_mode",
            "enum",
            "Team mode",
            default="coordinate",
            options=("coordinate", "route", "broadcast", "tasks"),
            description="How a leader works with its sub-agents",
        ),
        Parameter(
            "history",
            "boolean",
            "Remember the chat",
            default=True,
            description="Keep the conversation per chat_id in the session store",
        ),
        Parameter("num_history_runs", "integer", "History turns", default=10, minimum=1),
        Parameter("tool_call_limit", "integer", "Tool call limit", minimum=1),
    ),
    side_effects="idempotent",
    streaming=True,
    output_shape={"response": "string", "model": "string", "tokens_used": "object"},
)
