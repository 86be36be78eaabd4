"""A Workflow Agent as an Agno Agent: its model through nodeloom's model resolution,
`web_search` as the http_fetch tool, and its subagents (compiled first, children before
parents) as tools that run them."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.workflow.nodes.agent.subagents import subagent_tool
from nodeloom.models.llm import spec_from_parameters
from nodeloom.models.resolve import create_model
from nodeloom.plugins.contract import AgentResult, BuildContext

# Parameters the compiled agent depends on (a change during the flow compiles it again).
BUILD_PARAMETERS = (
    "system_prompt",
    "model",
    "reasoning_effort",
    "web_search",
    "subagents",
    "base_url",
    "api_key",
)
# Providers whose Agno model takes `reasoning_effort` (the OpenAI protocol); others ignore it.
REASONING_PROVIDERS = frozenset({"openai", "openai-compatible"})


def compile_agent(data: dict[str, Any], context: BuildContext) -> AgentResult:
    from agno.agent import Agent

    where = f"'{context.node_name}'"
    spec = spec_from_parameters(data, where=where)
    model = create_model(spec, where=where, http_client=context.http_client())
    effort = data.get("reasoning_effort")
    if effort and spec.provider in REASONING_PROVIDERS:
        model.reasoning_effort = effort
    tools: list[Any] = []
    names: list[str] = []
    if data.get("web_search"):
        from nodeloom.tools.builtins import make_http_fetch

        tools.append(make_http_fetch(allow_private=False))
        names.append("http_fetch")
    for source in context.tools:
        tools.extend(source.tools)
        names.extend(source.names)
    members = []
    if context.sub_agents and not data.get("subagents"):
        raise NodeError(
            f"agents are wired into the tools of {where} but its Subagents tool is off; set "
            "`subagents: true` or remove the wires",
            code="subagents_disabled",
            retryable=False,
        )
    for _, result in context.sub_agents:
        tool = subagent_tool(result)
        tools.append(tool)
        names.append(tool.name)
        members.append(result.summary)
    agent = Agent(
        name=context.node_name,
        model=model,
        system_message=data.get("system_prompt") or None,
        tools=tools or None,
        markdown=False,
        telemetry=False,
    )
    summary: dict[str, Any] = {
        "node": context.node_name,
        "node_id": context.node_id,
        "kind": "Agent",
        "model": spec.reference,
        "tools": names,
        "tool_sources": [source.source for source in context.tools],
        "members": members,
        "system_prompt": data.get("system_prompt") or "",
        "web_search": bool(data.get("web_search")),
    }
    if effort:
        summary["reasoning_effort"] = effort if spec.provider in REASONING_PROVIDERS else None
    return AgentResult(agent, summary)
