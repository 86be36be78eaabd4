"""`nodeloom workers`: the live processes of the worker registry (servers and workers)
with their load, read from the run store (NODELOOM_DATABASE_URL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import click
from rich.markup import escape
from rich.table import Table

from nodeloom.cli.foreground import exit_on_error
from nodeloom.cli.output import Progress, json_line, stdout_console
from nodeloom.cli.records import when
from nodeloom.observability.fleet import LIVE_SECONDS
from nodeloom.store import Store, WorkerRecord


@click.command("workers")
@click.option(
    "--within",
    type=click.FloatRange(min=0, min_open=True),
    default=LIVE_SECONDS,
    show_default=True,
    help="Seconds: a process not seen for longer is not listed.",
)
@click.option("--all", "show_all", is_flag=True, help="Also processes that stopped or went silent.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per process.")
def workers_command(within: float, show_all: bool, as_json: bool) -> None:
    """List the servers and workers seen recently, busiest first: runs in flight, their
    concurrency, when they started and were last seen (docs/observability.md)."""

    async def read() -> list[WorkerRecord]:
        async with await Store.open() as store:
            if show_all:
                return await store.list_workers(seen_within=None, stopped=True)
            return await store.list_workers(seen_within=within)

    with exit_on_error(Progress(), as_json):
        workers = asyncio.run(read())
    if as_json:
        for worker in workers:
            json_line({**worker.to_json(), "runs": worker.metrics.get("runs", {})})
        return
    console = stdout_console()
    if not workers:
        console.print(
            "No worker seen in the last "
            f"{within:g} s. Start one with `nodeloom worker`, or a server with `nodeloom serve`."
        )
        return
    console.print(_table(workers))


def _table(workers: list[WorkerRecord]) -> Table:
    table = Table("id", "role", "host", "pid", "in flight", "started", "last seen", "runs done")
    now = datetime.now(UTC)
    for worker in workers:
        slots = str(worker.concurrency) if worker.concurrency > 0 else "-"
        runs = worker.metrics.get("runs", {}) if isinstance(worker.metrics, dict) else {}
        done = sum(runs.get(k, 0) for k in ("completed", "failed", "cancelled"))
        seen = f"{(now - worker.last_seen).total_seconds():.0f} s ago"
        if worker.stopped_at is not None:
            seen += " (stopped)"
        table.add_row(
            escape(worker.id),
            worker.role,
            escape(worker.host),
            str(worker.pid),
            f"{worker.in_flight}/{slots}",
            when(worker.started_at),
            seen,
            str(done),
        )
    return table
