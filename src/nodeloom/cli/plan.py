from __future__ import annotations

import asyncio
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from nodeloom.cli.output import Progress, invalid_line, json_line
from nodeloom.engine.build import BuildError, Built
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import EXIT_INVALID
from nodeloom.errors import GraphError
from nodeloom.plugins.contract import AgentResult, MetadataResult, ToolsResult


@click.command("plan")
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the build plan as JSON.")
def plan_command(file: str, as_json: bool) -> None:
    """Show phase 1 for FILE: which nodes compile into which Agent or Team, with which
    tools. Builds the clusters (starting MCP servers to list their tools) but calls no
    model. Exit 1 if a node cannot be built, 2 if the graph is invalid."""
    try:
        flow = load(file)
    except GraphError as exc:
        if as_json:
            json_line(invalid_line(exc.issues))
        else:
            Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    try:
        plan = asyncio.run(_plan(flow))
    except BuildError as exc:
        if as_json:
            json_line({"type": "plan", "status": "failed", "error": exc.payload})
        else:
            Console(stderr=True).print(f"[red]{escape(str(exc))}[/]")
        raise SystemExit(1) from None
    if as_json:
        json_line({"type": "plan", "status": "ok", **plan})
    else:
        _show(plan)


async def _plan(flow: Flow) -> dict[str, Any]:
    try:
        built = await flow.build()
        return _describe(flow, built)
    finally:
        await flow.aclose()


def _describe(flow: Flow, built: Built) -> dict[str, Any]:
    roles = flow.checked.structure.roles
    agents, others = [], []
    for node_id in built.order:
        result = built.results.get(node_id)
        in_flow = node_id.rsplit("/", 1)[-1] not in roles or "/" in node_id
        if isinstance(result, AgentResult):
            if node_id.split("/")[-1] not in roles:
                agents.append({"node_id": node_id, **result.summary})
        elif isinstance(result, (ToolsResult, MetadataResult)) or result is None:
            others.append(
                {
                    "node_id": node_id,
                    "node_name": built.contexts[node_id].node_name,
                    "node_type": built.contexts[node_id].node_type,
                    "in_flow": in_flow,
                    **(
                        {"tools": result.names, "source": result.source}
                        if isinstance(result, ToolsResult)
                        else {}
                    ),
                }
            )
    return {"clusters": agents, "built": others, "flow_nodes": [n.name for n in flow.plan.nodes]}


def _show(plan: dict[str, Any]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    if not plan["clusters"]:
        console.print("No agent clusters: phase 1 only checks the LLM nodes' models.")
    for cluster in plan["clusters"]:
        tree = Tree(_label(cluster))
        _members(tree, cluster)
        console.print(tree)
    console.print(f"Flow nodes (phase 2): {', '.join(plan['flow_nodes']) or 'none'}")


def _label(summary: dict[str, Any]) -> str:
    kind = summary.get("kind", "Agent")
    mode = f" ({summary['mode']})" if summary.get("mode") else ""
    tools = summary.get("tools") or []
    listed = f"; tools: {', '.join(tools)}" if tools else ""
    return (
        f"[bold]{escape(summary['node'])}[/] → {kind}{mode}, model "
        f"{escape(str(summary.get('model')))}{escape(listed)}"
    )


def _members(tree: Tree, summary: dict[str, Any]) -> None:
    for source in summary.get("tool_sources") or []:
        tree.add(f"[dim]tools from {escape(source)}[/]")
    for member in summary.get("members") or []:
        _members(tree.add(_label(member)), member)
