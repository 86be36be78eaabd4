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
from nodeloom.errors import GraphError
from nodeloom.formats import FormatOptions
from nodeloom.plugins.contract import Event


@click.command("chat")
@click.argument("file", type=click.Path())
@click.option("--chat-id", help="Continue an earlier conversation (default: a new one).")
@click.option("--steps", is_flag=True, help="Also show each node's progress.")
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
    mock_script: str | None,
    format_options: FormatOptions,
) -> None:
    """Chat with the graph in FILE in the terminal: one run per message, one chat_id for
    the whole conversation, tokens shown as they arrive. End with Ctrl-D or /exit."""
    try:
        flow = load(file, options=format_options)
    except GraphError as exc:
        Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    try:
        asyncio.run(_chat(flow, chat_id or uuid.uuid4().hex, steps, mock_script))
    except GraphError as exc:
        Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None


async def _chat(flow: Flow, chat_id: str, steps: bool, mock_script: str | None) -> None:
    async with mock_llm(mock_script):
        await _turns(flow, chat_id, steps)


async def _turns(flow: Flow, chat_id: str, steps: bool) -> None:
    console = Console(highlight=False, soft_wrap=True)
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

            def show(event: Event) -> None:
                nonlocal streamed
                data = event.data or {}
                if event.event_type == "progress" and "token" in data:
                    console.print(escape(str(data["token"])), end="")
                    streamed = True
                elif steps:
                    progress.emit(event)

            result = await flow.run(line, sink=CallbackSink(show), chat_id=chat_id)
            if result.status is RunStatus.COMPLETED and not streamed:
                console.print(escape(_answer(flow, result.outputs)), end="")
            elif result.status is not RunStatus.COMPLETED:
                console.print(f"[red]{escape(str((result.error or {}).get('message')))}[/]", end="")
            console.print()
    finally:
        await flow.aclose()


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
