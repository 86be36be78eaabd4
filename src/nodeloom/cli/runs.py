"""`nodeloom runs`: the recorded runs of the run store (see docs/store.md): list them,
show one with its per-node timeline and events, resume, re-run, cancel, prune."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

import click

from nodeloom.cli.answers import parse_responses, respond_option
from nodeloom.cli.foreground import (
    end_names,
    event_sink,
    exit_on_error,
    finish,
    foreground,
    how_to_answer,
    json_option,
    recorded,
)
from nodeloom.cli.mock import mock_llm_option
from nodeloom.cli.output import Progress, json_line, stdout_console
from nodeloom.cli.records import event_line, run_header, runs_table, timeline_table, waiting_of
from nodeloom.engine.events import EventSink
from nodeloom.engine.flow import load
from nodeloom.engine.result import RunResult
from nodeloom.runs import RunService
from nodeloom.store import NodeExecution, PruneReport, RunRecord, Store
from nodeloom.store.records import RUN_STATES

T = TypeVar("T")
Begin = Callable[[RunService, EventSink, bool], Awaitable[RunResult]]  # (service, sink, hold)

DURATION = re.compile(r"(\d+)([smhdw])")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@click.group("runs")
def runs_command() -> None:
    """The recorded runs (every `nodeloom run` unless --ephemeral): list, show, events,
    resume, rerun, cancel, prune. NODELOOM_DATABASE_URL chooses the run store.

    Exit codes: 2 for an unknown run id or bad arguments, 1 if the run store fails;
    resume and rerun exit like `run` (0 completed, 1 failed, 3 paused, 4 cancelled).
    """


# -- reading ----------------------------------------------------------------------------------


@runs_command.command("list")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(RUN_STATES),
    help="Only runs in this status (repeatable).",
)
@click.option("--flow", "flow_id", metavar="ID", help="Only runs of this saved flow.")
@click.option("--chat", "chat_id", metavar="ID", help="Only runs of this chat.")
@click.option(
    "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Runs shown."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per run.")
def list_command(
    statuses: tuple[str, ...],
    flow_id: str | None,
    chat_id: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List the recorded runs, newest first.

    Each with its status, start, duration, steps, tokens and error. Runs whose process
    died are marked `interrupted` first."""

    async def read(store: Store) -> list[RunRecord]:
        await store.find_interrupted()
        return await store.list_runs(
            status=statuses or None, flow_id=flow_id, chat_id=chat_id, limit=limit
        )

    records = _with_store(read, as_json)
    if as_json:
        for record in records:
            json_line(record.to_json())
        return
    console = stdout_console()
    if not records:
        filtered = statuses or flow_id or chat_id
        console.print("No run matches." if filtered else "No run recorded yet.")
        return
    console.print(runs_table(records))


@runs_command.command("show")
@click.argument("run_id")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the run record and its timeline as JSON."
)
def show_command(run_id: str, as_json: bool) -> None:
    """Show a run and its per-node timeline.

    The header gives status, trigger, times, usage, error and what it re-runs; the
    timeline every node execution in start order; a paused run also what it waits for
    and how to answer."""

    async def read(store: Store) -> tuple[RunRecord, list[NodeExecution], list[dict[str, Any]]]:
        await store.find_interrupted()
        record = await store.get_run(run_id)
        rows = await store.node_executions(run_id)
        waiting: list[dict[str, Any]] = []
        if record.status == "paused":
            waiting = waiting_of(await store.events(run_id, from_seq=record.last_seq))
        return record, rows, waiting

    record, rows, waiting = _with_store(read, as_json)
    if as_json:
        json_line(
            {
                "run": record.to_json(),
                "timeline": [row.to_json() for row in rows],
                "waiting": waiting,
            }
        )
        return
    console = stdout_console()
    for line in run_header(record):
        console.print(line)
    console.print()
    if rows:
        console.print(timeline_table(record, rows))
    else:
        console.print("No node ran.")
    if waiting:
        console.print()
        how_to_answer(console, record.id, waiting)


@runs_command.command("events")
@click.argument("run_id")
@click.option(
    "--from-seq",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Only events with this sequence number or later.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object per event (as `run --json`)."
)
def events_command(run_id: str, from_seq: int, as_json: bool) -> None:
    """Print a run's events in order, one line each."""
    events = _with_store(lambda store: store.events(run_id, from_seq), as_json)
    if as_json:
        for event in events:
            json_line(event.to_json())
        return
    console = stdout_console()
    for event in events:
        console.print(event_line(event))


# -- changing ---------------------------------------------------------------------------------


@runs_command.command("cancel")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
def cancel_command(run_id: str, as_json: bool) -> None:
    """Cancel a paused, interrupted or running run.

    A run running in another process is asked to stop: it does within a second."""

    async def cancel(store: Store) -> RunRecord:
        service = RunService(store)
        try:
            return await service.cancel(run_id)
        finally:
            await service.aclose()

    record = _with_store(cancel, as_json)
    if as_json:
        json_line(record.to_json())
    elif record.status == "running":
        click.echo(
            f"cancel requested: run {record.id} runs in process {record.owner_pid} on "
            f"{record.owner_host}, which stops it within a second"
        )
    else:
        click.echo(f"run {record.id} {record.status}")


@runs_command.command("resume")
@click.argument("run_id")
@respond_option
@click.option(
    "--replay-external",
    is_flag=True,
    help="Run again the external nodes that were running when the run stopped (they may "
    "have acted already); without it such a node waits for a decision.",
)
@json_option
@mock_llm_option
def resume_command(
    run_id: str,
    responses: tuple[str, ...],
    replay_external: bool,
    as_json: bool,
    mock_script: str | None,
) -> None:
    """Continue a paused or interrupted run.

    It runs in this process: nodes on record as finished are not run again; --respond
    answers waiting nodes. Without --json and at a terminal, waiting nodes are asked for
    there.

    Exit codes: 0 completed, 1 failed, 2 invalid input, 3 paused, 4 cancelled.
    """
    with exit_on_error(Progress(), as_json):
        answers = parse_responses(responses)
    _take_up(
        run_id,
        as_json,
        mock_script,
        lambda service, sink, hold: service.resume(
            run_id, answers=answers, replay_external=replay_external, sink=sink, hold=hold
        ),
    )


@runs_command.command("rerun")
@click.argument("run_id")
@click.option(
    "--from",
    "from_node",
    required=True,
    metavar="NODE",
    help="Run NODE (id or name) and what follows it; every other node keeps its outputs.",
)
@json_option
@mock_llm_option
def rerun_command(run_id: str, from_node: str, as_json: bool, mock_script: str | None) -> None:
    """Run a recorded run again from a node.

    A new run of the same graph and trigger runs NODE and its descendants, taking every
    other node's outputs from run RUN_ID.

    Exit codes: 0 completed, 1 failed, 2 invalid input, 3 paused, 4 cancelled.
    """
    _take_up(
        run_id,
        as_json,
        mock_script,
        lambda service, sink, hold: service.rerun(run_id, from_node, sink=sink, hold=hold),
    )


@runs_command.command("prune")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="AGE",
    callback=lambda _context, _option, value: (value, _age(value)),
    help="Delete runs that ended longer ago than this: a number and s, m, h, d or w (30d).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was deleted as JSON.")
def prune_command(older_than: tuple[str, timedelta], as_json: bool) -> None:
    """Delete the runs that ended longer ago than AGE.

    Finished runs (completed, failed, cancelled, interrupted) go with their events and
    timelines, then the graph documents and blobs nothing uses any more. Running and
    paused runs are kept."""
    text, age = older_than
    report: PruneReport = _with_store(lambda store: store.prune(age), as_json)
    if as_json:
        json_line(asdict(report))
        return
    click.echo(
        f"deleted {report.runs} runs that ended more than {text} ago: "
        f"{report.events} events, {report.node_executions} node executions, "
        f"{report.documents} graph documents, {report.blobs} blobs "
        f"({report.bytes_freed} bytes freed)"
    )


# -- helpers ----------------------------------------------------------------------------------


def _with_store(work: Callable[[Store], Awaitable[T]], as_json: bool) -> T:
    """`work` on the open run store, in one event loop; errors become exit codes."""

    async def go() -> T:
        async with await Store.open() as store:
            return await work(store)

    with exit_on_error(Progress(), as_json):
        return asyncio.run(go())


def _take_up(run_id: str, as_json: bool, mock_script: str | None, begin: Begin) -> NoReturn:
    """Resume or re-run (`begin`) in the foreground, print the result like `run` and exit
    with its code. At a terminal without --json, a paused run is asked for there."""
    progress = Progress()
    with exit_on_error(progress, as_json):
        interactive = not as_json and sys.stdin.isatty()
        sink = event_sink(as_json, progress)

        async def go() -> tuple[RunResult, set[str]]:
            async with await Store.open() as store:
                # the end nodes' outputs are what the summary shows
                ends = set() if as_json else await _end_names(store, run_id)
                result = await foreground(
                    lambda: recorded(
                        store, lambda service: begin(service, sink, interactive), interactive
                    ),
                    run_id,
                    mock_script,
                )
            return result, ends

        result, ends = asyncio.run(go())
    finish(result, as_json, progress, ends, resumable=True)


async def _end_names(store: Store, run_id: str) -> set[str]:
    record = await store.get_run(run_id)
    if record.flow_id is not None:
        version = await store.get_flow(record.flow_id, record.flow_version, include_deleted=True)
        document = version.document
    else:
        document = await store.run_document(run_id)
    return end_names(load(document)) if document is not None else set()


def _age(text: str) -> timedelta:
    match = DURATION.fullmatch(text.strip())
    if match is None:
        raise click.BadParameter(
            f"{text!r} is not an age: give a whole number and a unit, s (seconds), "
            "m (minutes), h (hours), d (days) or w (weeks), e.g. 30d or 12h"
        )
    number, unit = match.groups()
    return timedelta(**{UNITS[unit]: int(number)})
