from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check_chat_trigger(data: Mapping[str, Any], trigger: Any) -> list[tuple[str, str, str]]:
    """A turn's `tools` (the user's picks) are a list of names, and only taken when
    `includeUserTools` is on: refused before the run starts, so before any token."""
    # Asked before every run: a dict (what a run's trigger is) is told apart first, at C
    # speed (an ABC isinstance costs ~0.3 µs).
    is_mapping = type(trigger) is dict or isinstance(trigger, Mapping)
    tools = trigger.get("tools") if is_mapping else None
    if tools is None or tools == []:
        return []
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        return [("invalid_request", "tools", 'tools must be a list of names, e.g. ["math"]')]
    if data.get("includeUserTools") is not True:
        message = (
            f"this turn brings tools ({', '.join(tools)}) but the flow's Chat Start has "
            "includeUserTools off: turn it on to merge the user's tools into the root agent, "
            "or send the turn without tools"
        )
        return [("user_tools_disabled", "includeUserTools", message)]
    return []


definition = NodeDefinition(
    id="chat-start",
    name="Chat Start",
    category="core",
    description='Where a turn enters the graph: outputs the user\'s message as {"message": ...}. '
    "Also says whether the turn's user-picked tools reach the root agent and whether chat "
    "replies show the flow's steps.",
    icon="MessageSquare",
    execution_mode="flow",
    inputs=(),
    outputs=(Port("output", description='{"message": <the turn\'s message>}'),),
    parameters=(
        Parameter(
            "includeUserTools",
            "boolean",
            "Include user tools",
            default=False,
            description="Merge the tools the person picked for a turn (toolsets and MCP "
            "servers the server offers) into the root agent: the Agent reached first from "
            "Chat Start. Off, a turn that brings tools is refused.",
        ),
        Parameter(
            "showFlowSteps",
            "boolean",
            "Show flow steps",
            default=True,
            description="Show each node's step (a flow_step card) in the chat. Off, the "
            "chat shows only the answer and the agents' content; the run still records "
            "every event.",
        ),
    ),
    trigger=True,
    output_shape={"message": "string"},
    check_trigger=check_chat_trigger,
)
