"""Plan LLM-First: one llm-first node of a plan.json plan (seed 000)."""

from collections.abc import Mapping
from typing import Any

from nodeloom.models.parameters import MODEL_PARAMETERS
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

STEP_INPUTS = (
    Port("input", description="The previous plan node's output (the order of the plan)"),
    Port(
        "tools",
        socket="tools",
        required=False,
        multiple=True,
        description="Toolsets offering the node's tools (the first that offers a name wins)",
    ),
)
STEP_OUTPUTS = (Port("output", description='{"thread_id", "content"}'),)

# Shared by plan-llm-first and plan-tool-first; a plan.json field each (docs/formats/plan.md).
STEP_PARAMETERS = (
    Parameter(
        "thread_id",
        "string",
        "Thread",
        required=True,
        description="The message thread the node works in; created on first use",
    ),
    Parameter(
        "task_prompt",
        "text",
        "Task prompt",
        default="",
        description="Added to the thread as a user message, then the model answers. "
        "Empty: no LLM call",
    ),
    Parameter(
        "tools",
        "json",
        "Tools",
        default=[],
        description="Names of the tools the model may call (wire the Toolsets offering them "
        "into `tools`)",
        placeholder='["add", "lookup"]',
    ),
    Parameter(
        "enable_tool_loop",
        "boolean",
        "Tool loop",
        default=False,
        description="Call the model again after each round of tool calls, until it stops "
        "calling tools. Off: one round, then a final answer",
    ),
    Parameter(
        "tools_limit",
        "json",
        "Tool quotas",
        default={},
        description='Calls allowed per tool for one execution of the node, e.g. {"add": 5}; '
        "a tool not listed may be called once",
    ),
    Parameter(
        "data_in_thread",
        "string",
        "Seed from thread",
        default="main",
        description="When the node creates its thread: the thread whose messages seed it",
    ),
    Parameter(
        "data_in_slice",
        "json",
        "Seed slice",
        description="[start, end) of the source's messages, as a Python slice (negative "
        "from the end, null open); [-1, -1]: none. Default (null): the last message",
    ),
    Parameter(
        "data_out",
        "boolean",
        "Send output",
        default=False,
        description="Merge the node's content into `data_out_thread` (created if missing)",
    ),
    Parameter(
        "data_out_thread",
        "string",
        "Output thread",
        default="main",
        description="Where `data_out` sends the content",
    ),
    Parameter(
        "data_out_description",
        "string",
        "Output prefix",
        default="",
        description="Text put before the content sent with `data_out`",
    ),
    *MODEL_PARAMETERS,
)


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _tools_ok(tools: Any) -> bool:
    return isinstance(tools, list) and all(isinstance(t, str) and t for t in tools)


def _limits_ok(limits: Any) -> bool:
    return isinstance(limits, dict) and all(_is_integer(n) and n >= 1 for n in limits.values())


def _window_ok(window: Any) -> bool:
    return (
        isinstance(window, list)
        and len(window) == 2
        and all(item is None or _is_integer(item) for item in window)
    )


_SHAPES = (
    ("tools", _tools_ok, 'tools is a list of tool names, e.g. ["add", "lookup"]'),
    (
        "tools_limit",
        _limits_ok,
        'tools_limit maps tool names to calls allowed (1 or more), e.g. {"add": 5}',
    ),
    ("data_in_slice", _window_ok, "data_in_slice is [start, end] (integers or nulls), or null"),
)


def check_step(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Shapes a parameter type cannot express (expressions are left to run time)."""
    issues: list[tuple[str, str]] = []
    for name in ("thread_id", "data_in_thread", "data_out_thread"):
        value = data.get(name)
        if isinstance(value, str) and not value.strip():
            issues.append((name, f"'{name}' is empty; name a thread, e.g. main"))
    for name, fits, message in _SHAPES:
        value = data.get(name)
        if value is not None and not _is_expression(value) and not fits(value):
            issues.append((name, message))
    return issues


definition = NodeDefinition(
    id="plan-llm-first",
    name="Plan LLM-First",
    category="formats",
    description="A plan.json llm-first node: adds its task prompt to its thread and lets the "
    "model answer, calling the node's tools. Threads live in the run's state.",
    icon="MessageSquareText",
    execution_mode="hybrid",
    inputs=STEP_INPUTS,
    outputs=STEP_OUTPUTS,
    parameters=STEP_PARAMETERS,
    side_effects="external",
    output_shape={"thread_id": "string", "content": "string"},
    check=check_step,
)
