"""Answering waiting nodes from the command line: `--respond NODE=JSON`, and prompts."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from nodeloom.engine.flow import Flow
from nodeloom.engine.human import AnswerError
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, Issue


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


async def answer_in_terminal(flow: Flow, result: RunResult) -> RunResult:
    """Ask the person at the terminal for each waiting node until the run stops pausing."""
    console = Console(stderr=True, highlight=False)
    while result.status is RunStatus.PAUSED:
        waiter = result.waiting[0]
        answer = await _ask(console, waiter)
        try:
            result = await flow.resume(result.run_id, waiter["node_id"], answer)
        except AnswerError as exc:
            console.print(f"[red]{escape(str(exc))}[/]")
    return result


async def _ask(console: Console, waiter: dict[str, Any]) -> Any:
    name = escape(waiter["node_name"])
    console.print(f"[magenta]?[/] [bold]{name}[/]: {escape(waiter.get('prompt') or '')}")
    if waiter.get("value") is not None:
        console.print(f"[dim]  {escape(json.dumps(waiter['value'], ensure_ascii=False))}[/]")
    if waiter["kind"] == "approval":
        decision = await _line("  approve or reject? ")
        note = await _line("  note (optional): ")
        return {"decision": decision, "note": note}
    fields = waiter.get("fields") or []
    if not fields:
        return await _line("  > ")
    form: dict[str, Any] = {}
    for field in fields:
        label = field.get("label") or field["name"]
        text = await _line(f"  {label}: ")
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


async def _line(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line:
        raise EOFError("no more input")
    return line.rstrip("\n")
