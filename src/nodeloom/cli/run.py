from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import click

from nodeloom.cli.answers import answer_in_terminal, parse_responses, respond_option
from nodeloom.cli.cassette import cassette, cassette_options, fail_on_misses
from nodeloom.cli.foreground import (
    end_names,
    event_sink,
    exit_on_error,
    finish,
    foreground,
    json_option,
    recorded,
)
from nodeloom.cli.format_options import format_options
from nodeloom.cli.mock import mock_llm_option
from nodeloom.cli.output import Progress
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import CallbackSink
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.formats import FormatOptions
from nodeloom.store import Store


@click.command("run")
@click.argument("file", type=click.Path())
@click.option("--input", "message", help="The turn's message (Chat Start outputs it).")
@json_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Fail the run after this many seconds.",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    help="Cap on node executions (default: the graph's limits.max_steps, else 1000).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Nodes running at once.",
)
@click.option("--target", help="Run only NODE and its ancestors.", metavar="NODE")
@click.option(
    "--from", "from_node", metavar="NODE", help="Run NODE and its descendants; needs --outputs."
)
@click.option(
    "--inputs",
    "inputs_json",
    metavar="JSON",
    help="Inputs of the run as a JSON object (Ethan YAML graphs: `graph.inputs`); "
    "expressions read them as $trigger.inputs.",
)
@format_options
@respond_option
@mock_llm_option
@cassette_options
@click.option(
    "--outputs",
    "outputs_file",
    type=click.Path(),
    help="JSON file of node name -> {port: value} for --from.",
)
@click.option(
    "--ephemeral",
    is_flag=True,
    help="Do not record the run in the run store (it cannot be resumed or inspected later).",
)
def run_command(
    file: str,
    message: str | None,
    as_json: bool,
    timeout: float | None,
    max_steps: int | None,
    concurrency: int,
    target: str | None,
    from_node: str | None,
    inputs_json: str | None,
    format_options: FormatOptions,
    responses: tuple[str, ...],
    mock_script: str | None,
    record_file: str | None,
    replay_file: str | None,
    outputs_file: str | None,
    ephemeral: bool,
) -> None:
    """Run the graph in FILE once, showing each node's progress. The run is recorded in
    the run store (see `nodeloom runs`) unless --ephemeral.

    Exit codes: 0 completed, 1 failed, 2 invalid input, 3 paused, 4 cancelled.
    """
    progress = Progress()
    with exit_on_error(progress, as_json, "--ephemeral runs without recording the run"):
        if (from_node is None) != (outputs_file is None):
            raise GraphError([Issue("invalid_request", "--from and --outputs go together")])
        outputs = _read_outputs(outputs_file) if outputs_file else None
        answers = parse_responses(responses)
        interactive = not as_json and sys.stdin.isatty()
        flow = load(file, options=format_options)
        trigger = {"inputs": _read_inputs(inputs_json)} if inputs_json is not None else None
        settings = RunSettings(
            max_concurrency=concurrency,
            max_steps=max_steps or flow.default_settings().max_steps,
            timeout=timeout,
        )
        with cassette(record_file, replay_file) as player:
            result = asyncio.run(
                _run(
                    flow,
                    message,
                    trigger,
                    event_sink(as_json, progress),
                    settings,
                    target,
                    from_node,
                    outputs,
                    mock_script,
                    answers,
                    interactive,
                    not ephemeral,
                )
            )
        result = fail_on_misses(result, player)
    finish(result, as_json, progress, end_names(flow), resumable=not ephemeral)


async def _run(
    flow: Flow,
    message: str | None,
    trigger: dict[str, Any] | None,
    sink: CallbackSink,
    settings: RunSettings,
    target: str | None,
    from_node: str | None,
    outputs: dict[str, Any] | None,
    mock_script: str | None,
    answers: dict[str, list[Any]],
    interactive: bool,
    record: bool,
) -> RunResult:
    run_id = uuid.uuid4().hex
    arguments: dict[str, Any] = {
        "trigger": trigger,
        "sink": sink,
        "settings": settings,
        "target": target,
        "from_node": from_node,
        "outputs": outputs,
        "run_id": run_id,
        "answers": answers,
    }

    async def go() -> RunResult:
        if not record:
            result = await flow.run(message, **arguments)
            if interactive and result.status is RunStatus.PAUSED:
                result = await answer_in_terminal(flow.resume, result)
            return result
        async with await Store.open() as store:
            return await recorded(
                store,
                lambda service: service.start(flow, message, hold=interactive, **arguments),
                interactive,
                flow.registry,
            )

    async with flow:
        return await foreground(go, run_id, mock_script)


def _read_inputs(text: str) -> dict[str, Any]:
    try:
        inputs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphError([Issue("invalid_request", f"--inputs is not JSON: {exc}")]) from None
    if not isinstance(inputs, dict):
        raise GraphError([Issue("invalid_request", "--inputs is a JSON object")])
    return inputs


def _read_outputs(path: str) -> dict[str, Any]:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraphError([Issue("invalid_outputs", f"no such file: {path}")]) from None
    except OSError as exc:
        raise GraphError([Issue("invalid_outputs", f"cannot read {path}: {exc}")]) from None
    except ValueError as exc:
        raise GraphError([Issue("invalid_outputs", f"{path} is not valid JSON: {exc}")]) from None
    if isinstance(document, dict) and document.get("type") == "result":
        document = document.get("outputs") or {}  # a saved `run --json` result line
    if not isinstance(document, dict):
        raise GraphError(
            [
                Issue(
                    "invalid_outputs", f"{path} must hold an object of node name -> {{port: value}}"
                )
            ]
        )
    return document
