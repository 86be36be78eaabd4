"""Writing to the terminal: JSON lines for machines, readable progress for people."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from nodeloom.errors import Issue
from nodeloom.plugins.contract import Event
from nodeloom.values import json_default


def stdout_console() -> Console:
    """A console for tables and reports on stdout. In a pipe it keeps every cell and line
    whole, so ids and messages can be grepped whatever the width (or stdin) of the caller."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = 10_000
    return console


def json_line(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, default=json_default, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def invalid_line(issues: list[Issue]) -> dict[str, Any]:
    return {"type": "result", "status": "invalid", "errors": [i.to_json() for i in issues]}


def preview(value: Any, limit: int = 120) -> str:
    """One line of at most `limit` characters."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, default=json_default, ensure_ascii=False)
    )
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Progress:
    """Live per-node progress lines on stderr, so stdout stays the result."""

    def __init__(self) -> None:
        # soft_wrap: a line is never broken at the console width, so every message stays
        # whole (and greppable) in logs and pipes, whatever the terminal's size.
        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self._streaming = False

    def emit(self, event: Event) -> None:
        kind, name = event.event_type, escape(event.node_name or "")
        data = event.data or {}
        if kind == "progress" and "token" in data:
            self.console.print(escape(str(data["token"])), end="")
            self._streaming = True
            return
        if self._streaming:
            self.console.print()
            self._streaming = False
        if kind == "started":
            self.console.print(f"[cyan]▶[/] {name} [dim]({event.node_type})[/]")
        elif kind == "completed":
            self.console.print(f"[green]✓[/] {name} [dim]{data.get('duration_ms', 0):.1f} ms[/]")
        elif kind == "skipped":
            self.console.print(
                f"[yellow]⊘[/] {name} [dim]skipped: {escape(str(data.get('reason', '')))}[/]"
            )
        elif kind == "error":
            error = data.get("error", {})
            handled = " (handled)" if data.get("handled") else ""
            self.console.print(f"[red]✗[/] {name}{handled}: {escape(str(error.get('cause')))}")
            if error.get("traceback"):
                self.console.print(f"[dim]{escape(error['traceback'])}[/]")
        elif kind == "agent_event":
            self._agent_event(name, data)
        elif kind == "waiting":
            asked = {"approval": "a decision", "wait": "its time"}.get(data.get("kind"), "input")
            self.console.print(
                f"[magenta]⏸[/] {name} waits for {asked}"
                + (f": {escape(str(data.get('prompt')))}" if data.get("prompt") else "")
            )
        elif kind == "resumed" and data.get("timed_out"):
            self.console.print(f"[magenta]▶[/] {name}'s wait ended: its deadline passed")
        elif kind == "resumed":
            self.console.print(f"[magenta]▶[/] {name} got {escape(preview(data.get('input')))}")
        elif kind == "progress":
            if "retry" in data:
                retry = data["retry"]
                self.console.print(
                    f"[yellow]↻[/] {name} attempt {retry['attempt']} failed "
                    f"({escape(retry['error'])}); retrying in "
                    f"{retry['next_in']:g} s"
                )
            elif "iteration" in data:
                self.console.print(f"[dim]  {name}: iteration {data['iteration']}/{data['of']}[/]")

    def _agent_event(self, name: str, data: dict[str, Any]) -> None:
        agent = escape(str(data.get("agent") or name))
        if data.get("event") == "ToolCallStarted":
            arguments = escape(preview(data.get("arguments") or {}, 80))
            self.console.print(
                f"[dim]  ⚙ {agent} → {escape(str(data.get('tool')))}({arguments})[/]"
            )
        elif data.get("event") == "ToolCallCompleted":
            result = escape(preview(data.get("result"), 80))
            self.console.print(f"[dim]  ⚙ {escape(str(data.get('tool')))} ⇒ {result}[/]")
        elif data.get("event") == "MemberRunStarted":
            self.console.print(f"[dim]  ↳ {agent} works[/]")

    def issues(self, issues: list[Issue]) -> None:
        self.console.print(
            f"[red]The graph is invalid ({len(issues)} problem"
            f"{'s' if len(issues) != 1 else ''}):[/]"
        )
        for issue in issues:
            self.console.print(f"  [red]•[/] {escape(str(issue))}")
