"""Plan Tool-First: one tool-first node of a plan.json plan (seed 000)."""

from collections.abc import Mapping
from typing import Any

from nodeloom.formats.plan.nodes.llm_first.definition import (
    STEP_INPUTS,
    STEP_OUTPUTS,
    STEP_PARAMETERS,
    check_step,
)
from nodeloom.plugins.contract import NodeDefinition, Parameter


def check_tool_first(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues = check_step(data)
    arguments = data.get("initial_tool_args")
    if arguments is not None and not isinstance(arguments, dict | str):
        issues.append(("initial_tool_args", "initial_tool_args is an object of arguments"))
    name = data.get("initial_tool_name")
    if isinstance(name, str) and not name.strip():
        issues.append(("initial_tool_name", "initial_tool_name is empty; name the tool to run"))
    return issues


definition = NodeDefinition(
    id="plan-tool-first",
    name="Plan Tool-First",
    category="formats",
    description="A plan.json tool-first node: runs its initial tool into its thread, then "
    "(with a task prompt) lets the model answer. Threads live in the run's state.",
    icon="Wrench",
    execution_mode="hybrid",
    inputs=STEP_INPUTS,
    outputs=STEP_OUTPUTS,
    parameters=(
        Parameter(
            "initial_tool_name",
            "string",
            "Initial tool",
            required=True,
            description="The tool run first (wire the Toolset offering it into `tools`)",
        ),
        Parameter(
            "initial_tool_args",
            "json",
            "Initial arguments",
            default={},
            description="The initial tool's arguments, an object",
        ),
        *STEP_PARAMETERS,
    ),
    side_effects="external",
    output_shape={"thread_id": "string", "content": "any"},
    check=check_tool_first,
)
