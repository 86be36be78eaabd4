"""Flow Tool: a saved flow as a tool for an Agent, wired into its `tools` socket."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def check_flow_tool(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`flow` is set; `name`, if set, is a name a model can call."""
    issues: list[tuple[str, str]] = []
    flow = data.get("flow")
    if flow is not None and (not isinstance(flow, str) or not flow.strip()):
        issues.append(("flow", "flow must be a saved flow's id or name, e.g. 'Lookup order'"))
    name = data.get("tool_name")
    if name not in (None, "") and (not isinstance(name, str) or not TOOL_NAME.fullmatch(name)):
        issues.append(
            (
                "tool_name",
                f"{name!r} is not a tool name: letters, digits, '_' and '-', starting with a "
                "letter or '_', at most 64 characters, e.g. lookup_order",
            )
        )
    return issues


definition = NodeDefinition(
    id="flow-tool",
    name="Flow Tool",
    category="tools",
    description="A saved flow as a tool for an Agent: the model calls it with the flow's "
    "trigger as arguments, each call is a child run of the agent's run, and its steps show "
    "under the tool call. Wire its `tools` socket into an Agent's `tools`.",
    icon="Workflow",
    execution_mode="structural",
    inputs=(),
    outputs=(
        Port("tools", socket="tools", label="Tools", description="Wire into an Agent's `tools`."),
    ),
    parameters=(
        Parameter(
            "flow",
            "string",
            "Flow",
            required=True,
            placeholder="Lookup order",
            description="The saved flow: its id, or its name (unique among saved flows).",
        ),
        Parameter(
            "version",
            "integer",
            "Version",
            minimum=1,
            description="A pinned version; empty: the flow's latest version at each call.",
        ),
        Parameter(
            "tool_name",
            "string",
            "Tool name",
            placeholder="lookup_order",
            description="The name the model calls the tool by; empty: the flow's name in "
            "snake_case.",
        ),
        Parameter(
            "description",
            "text",
            "Description",
            description="What the tool does, for the model; empty: the flow's description, "
            "else 'Runs the flow <name>'.",
        ),
    ),
    side_effects="external",
    check=check_flow_tool,
)
