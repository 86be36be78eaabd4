"""A run in the foreground of the terminal, shared by `run` and `runs resume|rerun`:
events shown as they happen (or printed as JSON lines), Ctrl-C and SIGTERM cancelling,
waiting nodes asked at the terminal, the result printed and turned into the exit code."""

from __future__ import annotations

import asyncio
import shlex
import signal
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from nodeloom.cli.answers import answer_in_terminal
from nodeloom.cli.mock import mock_llm
from nodeloom.cli.output import Progress, invalid_line, json_line, preview
from nodeloom.engine.events import CallbackSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import EXIT_CODES, EXIT_INVALID, RunResult, RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.plugins.contract import Event
from nodeloom.plugins.registry import Registry
from nodeloom.runs import RunService
from nodeloom.store import NotFoundError, RunStateError, Store, StoreError

EXIT_STORE = 1

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object per event, then a result line."
)


def event_sink(as_json: bool, progress: Progress) -> CallbackSink:
    """Events as JSON lines on stdout, or as progress lines on stderr."""
    return CallbackSink(_json_event if as_json else progress.emit)


def _json_event(event: Event) -> None:
    json_line(event.to_json())


async def foreground(
    work: Callable[[], Awaitable[RunResult]], run_id: str, mock_script: str | None
) -> RunResult:
    """Run `work` as a task that Ctrl-C (SIGINT) and SIGTERM cancel, serving the mock LLM
    script if one is given. A cancelled run ends `cancelled`."""
    async with mock_llm(mock_script):
        task = asyncio.create_task(work())
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            return await task
        except (asyncio.CancelledError, EOFError):
            return RunResult(
                run_id,
                RunStatus.CANCELLED,
                error={"code": "cancelled", "message": "the run was cancelled"},
            )
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)


async def recorded(
    store: Store,
    begin: Callable[[RunService], Awaitable[RunResult]],
    interactive: bool,
    registry: Registry | None = None,
) -> RunResult:
    """A recorded run: `begin` starts, resumes or re-runs it with the service (holding a
    paused run when `interactive`); while it is paused, the terminal is asked."""
    service = RunService(store, registry)
    try:
        result = await begin(service)
        if interactive and result.status is RunStatus.PAUSED:
            try:
                result = await answer_in_terminal(service.answer, result)
            except (asyncio.CancelledError, EOFError):
                # Ctrl-C (or the end of input) at a question cancels the run, as it does
                # while the run runs: the record must not stay paused.
                await service.cancel(result.run_id)
                raise
        return result
    finally:
        await service.aclose()


@contextmanager
def exit_on_error(progress: Progress, as_json: bool, store_hint: str = "") -> Iterator[None]:
    """Turn what stops a command before its run ends into a message and an exit code:
    2 for invalid input (a graph or option, an unknown run, a run in the wrong state),
    1 for the run store failing. With `as_json`, invalid input prints one result line."""
    try:
        yield
    except (NotFoundError, RunStateError) as exc:
        if as_json:
            json_line(invalid_line([Issue(exc.code, str(exc))]))
        else:
            progress.console.print(f"[red]{escape(str(exc))}[/]")
        raise SystemExit(EXIT_INVALID) from None
    except StoreError as exc:
        hint = f"\n({store_hint})" if store_hint else ""
        progress.console.print(f"[red]{escape(str(exc))}[/]{escape(hint)}")
        raise SystemExit(EXIT_STORE) from None
    except GraphError as exc:
        if as_json:
            json_line(invalid_line(exc.issues))
        else:
            progress.issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None


def end_names(flow: Flow) -> set[str]:
    """The names of the graph's end nodes: their outputs are what a run shows."""
    return {flow.plan.nodes[i].name for i in flow.plan.sinks}


def finish(
    result: RunResult,
    as_json: bool,
    progress: Progress,
    ends: Collection[str],
    resumable: bool,
) -> NoReturn:
    """Print the result (a JSON line, or a summary) and exit with its status's code."""
    if as_json:
        json_line(result.to_json())
    else:
        summary(result, progress, ends, resumable)
    raise SystemExit(EXIT_CODES[result.status])


def summary(result: RunResult, progress: Progress, ends: Collection[str], resumable: bool) -> None:
    """How the run ended and why (stderr), then its result or end nodes' outputs (stdout).
    A paused run that is `resumable` from the run store says how to answer it."""
    console = progress.console
    colour = {"completed": "green", "failed": "red", "cancelled": "yellow"}.get(
        result.status.value, "white"
    )
    console.print(
        f"\n[{colour}]Run {result.status.value}[/] in {result.duration_ms:.1f} ms "
        f"({result.steps} node executions)"
    )
    console.print(f"[dim]run id {result.run_id}[/]")
    if result.error:
        console.print(f"[red]{escape(str(result.error.get('message')))}[/]")
    if result.status is RunStatus.PAUSED and resumable:
        how_to_answer(console, result.run_id, result.waiting, describe=False)
    if result.result is not None:
        click.echo(f"result: {preview(result.result, 4000)}")
        return
    for name, ports in result.outputs.items():
        if name in ends:
            for port, value in ports.items():
                click.echo(f"{name}.{port}: {preview(value, 2000)}")


def how_to_answer(
    console: Console, run_id: str, waiting: list[dict[str, Any]], *, describe: bool = True
) -> None:
    """The command that answers the waiting nodes of a paused run; with `describe`, first
    what each waits for (a run's progress lines have said it already)."""
    command = f"nodeloom runs resume {run_id}"
    if describe:
        for waiter in waiting:
            console.print(f"[magenta]⏸[/] {escape(_waits_for(waiter))}")
    external = any(_is_external(waiter) for waiter in waiting)
    examples = " ".join(
        "--respond " + shlex.quote(f"{w['node_name']}={_example_answer(w)}") for w in waiting
    )
    console.print(f"Answer with: {escape(command)} {escape(examples)}")
    if external:
        console.print(
            f"or run the interrupted external node again: {escape(command)} --replay-external"
        )


def _waits_for(waiter: dict[str, Any]) -> str:
    kind = "a decision" if waiter.get("kind") == "approval" else "input"
    prompt = waiter.get("prompt")
    return f"{waiter['node_name']} waits for {kind}" + (f": {prompt}" if prompt else "")


def _is_external(waiter: dict[str, Any]) -> bool:
    value = waiter.get("value")
    return isinstance(value, dict) and value.get("reason") == "external_interrupted"


def _example_answer(waiter: dict[str, Any]) -> str:
    return "yes" if waiter.get("kind") == "approval" else "ANSWER"
