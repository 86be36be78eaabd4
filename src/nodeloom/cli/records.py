"""How recorded runs look in the terminal: the runs table, a run's header and per-node
timeline, one line per event. Pure rendering: the store is read by `nodeloom.cli.runs`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table

from nodeloom.cli.output import preview
from nodeloom.store import NodeExecution, RunRecord, StoredEvent

COLOURS = {
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "interrupted": "yellow",
    "skipped": "yellow",
    "paused": "magenta",
    "waiting": "magenta",
    "running": "cyan",
    "started": "cyan",
}


def runs_table(records: Iterable[RunRecord]) -> Table:
    table = Table("id", "status", "started", "duration", "steps", "tokens", "error")
    for record in records:
        table.add_row(
            record.id,
            status(record.status),
            when(record.started_at),
            wall_time(record),
            str(record.steps),
            tokens(record.usage),
            escape(preview(error_message(record.error), 80)) if record.error else "",
        )
    return table


def run_header(record: RunRecord) -> list[str]:
    """Lines (rich markup) describing the run: what ran, when, what it cost, how it ended."""
    lines = [f"[bold]run {record.id}[/]  {status(record.status)}"]

    def add(label: str, value: str) -> None:
        lines.append(f"  [dim]{label:<10}[/] {value}")

    if record.flow_id is not None:
        add("flow", escape(f"{record.flow_id} version {record.flow_version}"))
    elif record.document_hash:
        add("document", record.document_hash[:16])
    if record.chat_id:
        add("chat", escape(record.chat_id))
    if record.rerun_of:
        add("rerun of", escape(f"{record.rerun_of} from {record.rerun_from}"))
    if record.parent_run_id:
        add("child of", escape(f"{record.parent_run_id} (node {record.parent_node})"))
    add("trigger", escape(preview(record.trigger, 200)))
    add("created", when(record.created_at))
    add("started", when(record.started_at))
    if record.finished_at is not None:
        add("finished", f"{when(record.finished_at)} (after {wall_time(record)})")
    if record.duration_ms is not None:
        add("run time", duration(record.duration_ms))
    add("steps", str(record.steps))
    add("usage", usage(record.usage))
    if record.status == "running":
        add("owner", f"pid {record.owner_pid} on {escape(str(record.owner_host))}")
    if record.cancel_requested_at is not None:
        add("cancel", f"requested at {when(record.cancel_requested_at)}")
    if record.error:
        code = record.error.get("code")
        add("error", escape(f"[{code}] {error_message(record.error)}"))
    return lines


def timeline_table(record: RunRecord, rows: Iterable[NodeExecution]) -> Table:
    """Every node execution, in the order they started: when (after the run started),
    how long, how it ended, with attempts, tokens and error."""
    table = Table("#", "node", "type", "status", "at", "duration", "attempts", "tokens", "error")
    origin = record.started_at or record.created_at
    for number, row in enumerate(rows, 1):
        name = row.node_name or row.node_id
        label = name if name == row.node_id else f"{name} ({row.node_id})"
        if row.execution > 1:
            label += f" #{row.execution}"
        took = (
            duration((row.finished_at - row.started_at).total_seconds() * 1000)
            if row.finished_at is not None
            else ""
        )
        table.add_row(
            str(number),
            escape(label),
            escape(row.node_type or ""),
            status(row.status),
            "+" + duration((row.started_at - origin).total_seconds() * 1000),
            took,
            str(row.attempts),
            tokens(row.usage),
            escape(preview(_node_error(row.error), 120)) if row.error else "",
        )
    return table


def event_line(event: StoredEvent) -> str:
    """One readable line (rich markup): seq, time, type, node and a preview of its data."""
    clock = datetime.fromtimestamp(event.timestamp).strftime("%H:%M:%S.%f")[:-3]
    node = f" {event.node_name} ({event.node_type})" if event.node_name else ""
    data = f"  {preview(event.data, 160)}" if event.data else ""
    return f"{event.seq:>5} [dim]{clock}[/] {event.event_type:<14}{escape(node + data)}"


def waiting_of(events: Iterable[StoredEvent]) -> list[dict[str, Any]]:
    """Who waits for what, from a paused run's `run_paused` event."""
    for event in events:
        if event.event_type == "run_paused":
            return list(event.data.get("waiting") or [])
    return []


# -- values ----------------------------------------------------------------------------------


def status(value: str) -> str:
    colour = COLOURS.get(value, "white")
    return f"[{colour}]{value}[/]"


def when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value is not None else ""


def duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.1f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def wall_time(record: RunRecord) -> str:
    """From start to end, waiting for people included (blank while it has not ended)."""
    if record.started_at is None or record.finished_at is None:
        return ""
    return duration((record.finished_at - record.started_at).total_seconds() * 1000)


def tokens(value: dict[str, Any] | None) -> str:
    total = (value or {}).get("total_tokens")
    return str(total) if total else ""


def usage(value: dict[str, Any] | None) -> str:
    if not value or not value.get("total_tokens"):
        return "no tokens"
    parts = ", ".join(
        f"{key.removesuffix('_tokens')} {value[key]}"
        for key in ("prompt_tokens", "completion_tokens")
        if key in value
    )
    return f"{value['total_tokens']} tokens" + (f" ({parts})" if parts else "")


def error_message(error: dict[str, Any]) -> str:
    return str(error.get("message") or error.get("code") or error)


def _node_error(error: dict[str, Any]) -> str:
    """A node's own error: its cause (the message repeats the node's name and id)."""
    return str(error.get("cause") or error_message(error))
