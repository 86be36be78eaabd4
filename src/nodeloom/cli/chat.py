from __future__ import annotations

import asyncio
import sys
import uuid

import click
from rich.console import Console
from rich.markup import escape

from nodeloom.cli.format_options import format_options
from nodeloom.cli.mock import mock_llm
from nodeloom.cli.output import Progress
from nodeloom.engine.events import CallbackSink
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import EXIT_INVALID, RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.flow_steps import FlowSteps, registry_lookup, shows_flow_steps
from nodeloom.formats import FormatOptions
from nodeloom.graph.root_agent import USER_TOOLS_DISABLED, accepts_user_tools
from nodeloom.plugins.contract import Event
from nodeloom.user_tools import unknown_user_tools


@click.command("chat")
@click.argument("file", type=click.Path())
@click.option("--chat-id", help="Continue an earlier conversation (default: a new one).")
@click.option("--steps", is_flag=True, help="Also show each node's progress.")
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="NAME",
    help="A user tool for every turn (a name from the user tools file; repeat for more). "
    "The flow's Chat Start needs includeUserTools.",
)
@click.option(
    "--mock-llm",
    "mock_script",
    type=click.Path(),
    help="Serve this mock LLM script and point OpenAI-protocol models at it.",
)
@format_options
def chat_command(
    file: str,
    chat_id: str | None,
    steps: bool,
    tools: tuple[str, ...],
    mock_script: str | None,
    format_options: FormatOptions,
) -> None:
    """Chat with the graph in FILE in the terminal: one run per message, one chat_id for
    the whole conversation, tokens shown as they arrive, each node's flow_step card on
    stderr (unless Chat Start's showFlowSteps is off). End with Ctrl-D or /exit."""
    try:
        flow = load(file, options=format_options)
        _check_tools(flow, list(tools))
    except GraphError as exc:
        Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    try:
        asyncio.run(_chat(flow, chat_id or uuid.uuid4().hex, steps, list(tools), mock_script))
    except GraphError as exc:
        Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None


def _check_tools(flow: Flow, tools: list[str]) -> None:
    """Tools for a flow that does not take them, and names the user tools file does not
    offer, are refused before the first turn."""
    if tools and not accepts_user_tools(flow.graph):
        message = USER_TOOLS_DISABLED.format(tools=", ".join(tools))
        raise GraphError([Issue("user_tools_disabled", message, field="--tool")])
    message = unknown_user_tools(tools, flow.services.user_tools)
    if message is not None:
        raise GraphError([Issue("unknown_user_tool", message, field="--tool")])


async def _chat(
    flow: Flow, chat_id: str, steps: bool, tools: list[str], mock_script: str | None
) -> None:
    async with mock_llm(mock_script):
        await _turns(flow, chat_id, steps, tools)


async def _turns(flow: Flow, chat_id: str, steps: bool, tools: list[str]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    cards = Console(stderr=True, highlight=False, soft_wrap=True)
    lookup = registry_lookup(flow.graph, flow.registry)
    show_cards = shows_flow_steps(flow.graph)
    flow_steps = FlowSteps(lookup)  # each block prints as it ends
    progress = Progress()
    console.print(f"[dim]chat {chat_id} — Ctrl-D or /exit to leave[/]")
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, _prompt)
            if line is None or line.strip() in ("/exit", "/quit"):
                break
            if not line.strip():
                continue
            streamed = False
            flow_steps.blocks.clear()

            def show(event: Event) -> None:
                nonlocal streamed
                data = event.data or {}
                block = flow_steps.push(event)
                if event.event_type == "progress" and "token" in data:
                    console.print(escape(str(data["token"])), end="")
                    streamed = True
                elif steps:
                    progress.emit(event)
                elif show_cards and block is not None and block["status"] != "started":
                    cards.print(_card(block))

            trigger = {"tools": tools} if tools else None
            result = await flow.run(line, trigger=trigger, sink=CallbackSink(show), chat_id=chat_id)
            if result.status is RunStatus.COMPLETED and not streamed:
                console.print(escape(_answer(flow, result.outputs)), end="")
            elif result.status is not RunStatus.COMPLETED:
                console.print(f"[red]{escape(str((result.error or {}).get('message')))}[/]", end="")
            console.print()
    finally:
        await flow.aclose()


_MARKS = {"completed": "[green]✓[/]", "error": "[red]✗[/]", "skipped": "[dim]-[/]"}


def _card(block: dict) -> str:
    """A flow_step block as one line: `✓ Fetch (http-request) GET host → 200 · 12 ms`."""
    took = f" · {block['duration_ms']} ms" if block["duration_ms"] is not None else ""
    name = escape(str(block["node_name"] or block["node_id"]))
    return (
        f"{_MARKS.get(block['status'], '·')} {name} [dim]({block['node_type']})[/] "
        f"{escape(block['summary'])}[dim]{took}[/]"
    )


def _prompt() -> str | None:
    try:
        sys.stderr.write("you> ")
        sys.stderr.flush()
        line = sys.stdin.readline()
    except KeyboardInterrupt:
        return None
    return line.rstrip("\n") if line else None


def _answer(flow: Flow, outputs: dict) -> str:
    """The reply of a graph that streamed nothing: its last end node's main output."""
    for index in reversed(flow.plan.sinks):
        node = flow.plan.nodes[index]
        value = outputs.get(node.name, {}).get(node.main_port)
        if isinstance(value, dict):
            for key in ("response", "text", "message"):
                if isinstance(value.get(key), str):
                    return value[key]
        if value is not None:
            return str(value)
    return ""
