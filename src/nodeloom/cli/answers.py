"""Answering waiting nodes from the command line: `--respond NODE=JSON`, and prompts."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from nodeloom.engine.human import AnswerError
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, Issue

respond_option = click.option(
    "--respond",
    "responses",
    multiple=True,
    metavar="NODE=ANSWER",
    help="Answer a waiting node ahead of time (repeatable): NODE is an id or name, ANSWER is "
    'JSON or a word, e.g. Approve=yes or \'Approve={"decision": "reject", "note": "no"}\'.',
)


def parse_responses(values: tuple[str, ...]) -> dict[str, list[Any]]:
    """`NODE=JSON` (or `NODE=word`), repeatable: answers taken in turn per node."""
    answers: dict[str, list[Any]] = {}
    for value in values:
        node, sep, text = value.partition("=")
        if not sep or not node.strip():
            raise GraphError(
                [
                    Issue(
                        "invalid_request",
                        f"--respond takes NODE=ANSWER (a node "
                        f"id or name, then JSON or a word), got {value!r}",
                    )
                ]
            )
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            answer = text
        answers.setdefault(node.strip(), []).append(answer)
    return answers


Resume = Callable[[str, str, Any], Awaitable[RunResult]]  # (run id, node, answer)


async def answer_in_terminal(resume: Resume, result: RunResult) -> RunResult:
    """Ask the person at the terminal for each waiting node until the run stops pausing;
    `resume` is `Flow.resume` or `RunService.answer`."""
    console = Console(stderr=True, highlight=False)
    terminal = _Terminal()
    while result.status is RunStatus.PAUSED:
        waiter = result.waiting[0]
        answer = await _ask(console, terminal, waiter)
        try:
            result = await resume(result.run_id, waiter["node_id"], answer)
        except AnswerError as exc:
            console.print(f"[red]{escape(str(exc))}[/]")
    return result


async def _ask(console: Console, terminal: _Terminal, waiter: dict[str, Any]) -> Any:
    name = escape(waiter["node_name"])
    console.print(f"[magenta]?[/] [bold]{name}[/]: {escape(waiter.get('prompt') or '')}")
    if waiter.get("value") is not None:
        console.print(f"[dim]  {escape(json.dumps(waiter['value'], ensure_ascii=False))}[/]")
    if waiter["kind"] == "approval":
        decision = await terminal.line("  approve or reject? ")
        note = await terminal.line("  note (optional): ")
        return {"decision": decision, "note": note}
    fields = waiter.get("fields") or []
    if not fields:
        return await terminal.line("  > ")
    form: dict[str, Any] = {}
    for field in fields:
        label = field.get("label") or field["name"]
        text = await terminal.line(f"  {label}: ")
        if text:
            form[field["name"]] = _typed(text, field.get("type", "string"))
    return form


def _typed(text: str, kind: str) -> Any:
    if kind == "number":
        try:
            return float(text) if "." in text else int(text)
        except ValueError:
            return text
    if kind == "boolean":
        return {"true": True, "yes": True, "y": True, "false": False, "no": False, "n": False}.get(
            text.lower(), text
        )
    return text


class _Terminal:
    """Lines typed at the terminal, read as stdin becomes readable in the event loop. (A
    thread blocked in `readline` would keep the process alive after Ctrl-C until Enter.)"""

    def __init__(self) -> None:
        self._pending = b""

    async def line(self, prompt: str) -> str:
        sys.stderr.write(prompt)
        sys.stderr.flush()
        while b"\n" not in self._pending:
            chunk = await _read_some(sys.stdin.fileno())
            if not chunk:
                if not self._pending:
                    raise EOFError("no more input")
                break
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(sys.stdin.encoding or "utf-8", errors="replace").rstrip("\r")


async def _read_some(fd: int) -> bytes:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return os.read(fd, 4096)
