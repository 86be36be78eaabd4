"""A checked workflow as a native graph of each-nodes (see docs/formats/workflow.md).

    start     -> workflow-start    (handle output)
    agent     -> workflow-agent    (handle output; subagent links become agent -> tools wires)
    if        -> workflow-if       (handles condition-<i>, false)
    approval  -> approval          (the native node; handles approve, reject)

Every node gets `activation: each` (it runs once per value that arrives: the queue
semantics of the original engine, cycles included) and the graph a step limit, so a cycle
of agents ends. Nodes the start node cannot reach never ran in the original: they are left
out, and the graph's description names them.

Prompts and condition values are literal text in a workflow, but `{{ ... }}` is an
expression in nodeloom: `{{PREVIOUS_OUTPUT}}` in a user prompt becomes `{{ $json }}` (the
node's input, which is the previous node's output text) and any other `{{` is written as
the expression `{{ '{{' }}`, so the text reaches the model exactly as written.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from nodeloom.formats.workflow.document import Connection, Workflow, WorkflowNode
from nodeloom.models.providers import PROVIDERS

MAX_STEPS = 1000
DEFAULT_MODEL = "gpt-5"
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
PREVIOUS_OUTPUT = "{{PREVIOUS_OUTPUT}}"
INPUT_EXPRESSION = "{{ $json }}"

NATIVE_TYPES = {
    "start": "workflow-start",
    "agent": "workflow-agent",
    "if": "workflow-if",
    "approval": "approval",
}


def to_native(workflow: Workflow) -> dict[str, Any]:
    """The native graph document of a workflow that passed `check_workflow`."""
    keep = reachable(workflow)
    by_id = workflow.by_id
    subagents = {link.target for link in workflow.subagent_links()}
    names = _agent_names(workflow, keep)
    nodes = [
        _node(node, names.get(node.id), is_subagent=node.id in subagents)
        for node in workflow.nodes
        if node.id in keep
    ]
    edges = [
        _edge(connection, by_id[connection.source])
        for connection in workflow.connections
        if connection.source in keep and connection.target in keep
    ]
    left_out = [node.id for node in workflow.nodes if node.id not in keep]
    document: dict[str, Any] = {"format": "nodeloom"}
    if workflow.name:
        document["name"] = workflow.name
    document["description"] = _description(workflow, left_out)
    document["limits"] = {"max_steps": MAX_STEPS}
    document["nodes"] = nodes
    document["edges"] = edges
    return document


def reachable(workflow: Workflow) -> set[str]:
    """Nodes the start node reaches along execution edges, and their subagent trees."""
    follow: dict[str, list[str]] = {}
    for connection in workflow.connections:
        follow.setdefault(connection.source, []).append(connection.target)
    start = next(node.id for node in workflow.nodes if node.type == "start")
    seen = {start}
    queue = deque([start])
    while queue:
        for target in follow.get(queue.popleft(), []):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def model_reference(name: str | None) -> str:
    """A workflow's model name as a nodeloom reference: bare names are OpenAI models."""
    name = (name or "").strip() or DEFAULT_MODEL
    return name if name.partition(":")[0] in PROVIDERS else f"openai:{name}"


def literal(text: str) -> str:
    """`text` as a nodeloom template that renders to exactly `text`."""
    return text.replace("{{", "{{ '{{' }}")


def user_prompt(text: str) -> str:
    """A user prompt: `{{PREVIOUS_OUTPUT}}` reads the node's input, the rest is literal."""
    return INPUT_EXPRESSION.join(literal(part) for part in text.split(PREVIOUS_OUTPUT))


def _node(node: WorkflowNode, name: str | None, *, is_subagent: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"activation": "each"}
    if name:
        data["name"] = name
    data.update(_parameters(node, is_subagent=is_subagent))
    native: dict[str, Any] = {"id": node.id, "type": NATIVE_TYPES[node.type], "data": data}
    if node.position is not None:
        native["position"] = {"x": node.position[0], "y": node.position[1]}
    return native


def _parameters(node: WorkflowNode, *, is_subagent: bool) -> dict[str, Any]:
    data = node.data
    if node.type == "start":
        return {"initial_input": literal(data.get("initialInput") or "")}
    if node.type == "if":
        return {
            "conditions": [
                {
                    "operator": condition.get("operator") or "equal",
                    "value": literal(condition.get("value") or ""),
                }
                for condition in data["conditions"]
            ]
        }
    if node.type == "approval":
        prompt = data.get("prompt")
        return {"prompt": literal(prompt)} if prompt and prompt.strip() else {}
    tools = data.get("tools") or {}
    parameters: dict[str, Any] = {
        "system_prompt": literal(data.get("systemPrompt") or DEFAULT_SYSTEM_PROMPT),
    }
    prompt = data.get("userPrompt") or ""
    if prompt.strip() and not is_subagent:  # a subagent's prompt is its parent's tool call
        parameters["user_prompt"] = user_prompt(prompt)
    parameters["model"] = model_reference(data.get("model"))
    if data.get("reasoningEffort"):
        parameters["reasoning_effort"] = data["reasoningEffort"]
    parameters["web_search"] = tools.get("web_search") is True
    parameters["subagents"] = tools.get("subagents") is True
    return parameters


def _edge(connection: Connection, source: WorkflowNode) -> dict[str, Any]:
    if connection.is_subagent:  # the parent's `subagent` handle: child.agent -> parent.tools
        return {
            "id": connection.id,
            "source": connection.target,
            "sourceHandle": "agent",
            "target": connection.source,
            "targetHandle": "tools",
        }
    handle = connection.source_handle
    if source.type in ("start", "agent") or handle is None:
        handle = "output"
    return {
        "id": connection.id,
        "source": connection.source,
        "sourceHandle": handle,
        "target": connection.target,
        "targetHandle": "input",
    }


def _agent_names(workflow: Workflow, keep: set[str]) -> dict[str, str]:
    """Display names for agents from `agentName`, kept unique (a name may not repeat nor
    be another node's id): a repeated name gets the node id in parentheses."""
    ids = {node.id for node in workflow.nodes}
    wanted: dict[str, str] = {}
    for node in workflow.nodes:
        name = node.data.get("agentName") if node.type == "agent" else None
        if node.id in keep and isinstance(name, str) and name.strip():
            wanted[node.id] = name.strip()
    counts: dict[str, int] = {}
    for name in wanted.values():
        counts[name] = counts.get(name, 0) + 1
    names: dict[str, str] = {}
    taken = set(ids)
    for node_id, name in wanted.items():
        if counts[name] > 1 or (name in taken and name != node_id):
            name = f"{name} ({node_id})"
        if name not in taken or name == node_id:
            names[node_id] = name
            taken.add(name)
    return names


def _description(workflow: Workflow, left_out: list[str]) -> str:
    text = workflow.description or "Converted from a start/agent/if/approval workflow."
    if left_out:
        text += (
            " Left out (the start node does not reach them, so they never run): "
            + ", ".join(left_out)
            + "."
        )
    return text
