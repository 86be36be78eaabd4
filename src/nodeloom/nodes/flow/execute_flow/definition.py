"""Execute Flow: run another saved flow as a child run; its result is this node's output."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check_execute_flow(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`flow` names a saved flow; `version` and `max_depth` are positive integers."""
    issues: list[tuple[str, str]] = []
    flow = data.get("flow")
    if flow is not None and (not isinstance(flow, str) or not flow.strip()):
        issues.append(("flow", "flow must be a saved flow's id or name, e.g. 'Summarise'"))
    for key in ("version", "max_depth"):
        value = data.get(key)
        if value is None or (isinstance(value, str) and "{{" in value):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            issues.append((key, f"{key} must be a positive integer, got {value!r}"))
    return issues


definition = NodeDefinition(
    id="execute-flow",
    name="Execute Flow",
    category="flow",
    description="Runs another saved flow (by id or name, a pinned version or the latest) as "
    "a child run with its own record, linked to this run. `input` is the child's trigger; "
    "the child's result goes out on `output`. A failed child fails this node (see On error).",
    icon="Workflow",
    inputs=(
        Port(
            "input",
            required=False,
            description="The child's trigger when `input` is empty: an object as is, anything "
            'else as {"message": value}.',
        ),
    ),
    outputs=(
        Port(
            "output",
            description="The child run's result: the value a node set as its result, else its "
            "end node's main output (several end nodes: an object by node name).",
        ),
    ),
    parameters=(
        Parameter(
            "flow",
            "string",
            "Flow",
            required=True,
            placeholder="Summarise",
            description="The saved flow to run: its id, or its name (unique among saved flows).",
        ),
        Parameter(
            "version",
            "integer",
            "Version",
            minimum=1,
            description="A pinned version of the flow; empty: its latest version when the "
            "node runs.",
        ),
        Parameter(
            "input",
            "json",
            "Input",
            placeholder='{"message": "{{ $json.text }}"}',
            description="The child's trigger (what its trigger node outputs), e.g. "
            '{"message": ...} for a flow that starts with Chat Start. Expressions allowed. '
            "Empty: the value on the `input` port.",
        ),
        Parameter(
            "max_depth",
            "integer",
            "Max depth",
            default=10,
            minimum=1,
            description="How deep child runs may nest (a flow that calls itself): deeper, the "
            "node fails with `subflow_depth`, naming the chain of flows.",
        ),
    ),
    side_effects="external",
    check=check_execute_flow,
)
