from __future__ import annotations

import asyncio
import sys
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from nodeloom.cli.format_options import format_options
from nodeloom.cli.mock import mock_llm
from nodeloom.cli.output import Progress, invalid_line, json_line
from nodeloom.engine.build import BuildError, Built
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import EXIT_INVALID
from nodeloom.errors import GraphError
from nodeloom.formats import FormatOptions
from nodeloom.plugins.contract import AgentResult, MetadataResult, ToolsResult


@click.command("plan")
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the build plan as JSON.")
@click.option(
    "--mock-llm",
    "mock_script",
    type=click.Path(),
    help="Point OpenAI-protocol models at this mock LLM script while building.",
)
@format_options
def plan_command(
    file: str, as_json: bool, mock_script: str | None, format_options: FormatOptions
) -> None:
    """Show phase 1 for FILE: which nodes compile into which Agent or Team, with which
    tools. Builds the clusters (starting MCP servers to list their tools) but calls no
    model. Exit 1 if a node cannot be built, 2 if the graph is invalid."""
    try:
        flow = load(file, options=format_options)
    except GraphError as exc:
        if as_json:
            json_line(invalid_line(exc.issues))
        else:
            Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    try:
        plan = asyncio.run(_plan(flow, mock_script))
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


async def _plan(flow: Flow, mock_script: str | None) -> dict[str, Any]:
    async with mock_llm(mock_script), flow:
        return _describe(flow, await flow.build())


def _describe(flow: Flow, built: Built) -> dict[str, Any]:
    """Agents that run in the flow, with their compiled trees; and everything built."""
    roles = flow.checked.structure.roles
    clusters = [
        {"node_id": node_id, **result.summary}
        for node_id, result in built.results.items()
        if isinstance(result, AgentResult) and node_id not in roles
    ]
    nodes = []
    for node_id in built.order:
        context, result = built.contexts[node_id], built.results.get(node_id)
        entry: dict[str, Any] = {
            "node_id": node_id,
            "node_name": context.node_name,
            "node_type": context.node_type,
            "structural": node_id in roles,
        }
        if isinstance(result, ToolsResult):
            entry.update(tools=result.names, source=result.source)
        elif isinstance(result, MetadataResult):
            entry["offers"] = result.metadata
        nodes.append(entry)
    return {"clusters": clusters, "built": nodes, "flow_nodes": [n.name for n in flow.plan.nodes]}


def _show(plan: dict[str, Any]) -> None:
    console = Console(highlight=False, width=10_000 if not sys.stdout.isatty() else None)
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
    return (
        f"[bold]{escape(summary['node'])}[/] → {kind}{mode}, model "
        f"{escape(str(summary.get('model')))}"
    )


def _members(tree: Tree, summary: dict[str, Any]) -> None:
    if summary.get("tools"):
        tree.add(f"tools: {escape(', '.join(summary['tools']))}")
    for source in summary.get("tool_sources") or []:
        tree.add(f"[dim]from {escape(source)}[/]")
    for member in summary.get("members") or []:
        _members(tree.add(_label(member)), member)
