from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import click

from nodeloom.cli.answers import answer_in_terminal, parse_responses
from nodeloom.cli.format_options import format_options
from nodeloom.cli.mock import mock_llm
from nodeloom.cli.output import Progress, invalid_line, json_line, preview
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import CallbackSink
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import EXIT_CODES, EXIT_INVALID, RunResult, RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.formats import FormatOptions
from nodeloom.plugins.contract import Event


@click.command("run")
@click.argument("file", type=click.Path())
@click.option("--input", "message", help="The turn's message (Chat Start outputs it).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object per event, then a result line."
)
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
@click.option(
    "--respond",
    "responses",
    multiple=True,
    metavar="NODE=ANSWER",
    help="Answer a waiting node ahead of time (repeatable): NODE is an id or name, ANSWER is "
    'JSON or a word, e.g. Approve=yes or \'Approve={"decision": "reject", "note": "no"}\'.',
)
@click.option(
    "--mock-llm",
    "mock_script",
    type=click.Path(),
    help="Serve this mock LLM script and point OpenAI-protocol models at it "
    "(test a flow offline, without spending tokens).",
)
@click.option(
    "--outputs",
    "outputs_file",
    type=click.Path(),
    help="JSON file of node name -> {port: value} for --from.",
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
    outputs_file: str | None,
) -> None:
    """Run the graph in FILE once, showing each node's progress.

    Exit codes: 0 completed, 1 failed, 2 invalid input, 3 paused, 4 cancelled.
    """
    progress = Progress()
    try:
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
        sink = CallbackSink(_json_event if as_json else progress.emit)
        result = asyncio.run(
            _run(
                flow,
                message,
                trigger,
                sink,
                settings,
                target,
                from_node,
                outputs,
                mock_script,
                answers,
                interactive,
            )
        )
    except GraphError as exc:
        if as_json:
            json_line(invalid_line(exc.issues))
        else:
            progress.issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    if as_json:
        json_line(result.to_json())
    else:
        _summary(flow, result, progress)
    raise SystemExit(EXIT_CODES[result.status])


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
) -> RunResult:
    run_id = uuid.uuid4().hex

    async def go() -> RunResult:
        result = await flow.run(
            message,
            trigger=trigger,
            sink=sink,
            settings=settings,
            target=target,
            from_node=from_node,
            outputs=outputs,
            run_id=run_id,
            answers=answers,
        )
        if interactive and result.status is RunStatus.PAUSED:
            result = await answer_in_terminal(flow, result)
        return result

    async with mock_llm(mock_script), flow:
        task = asyncio.create_task(go())
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


def _json_event(event: Event) -> None:
    json_line(event.to_json())


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


def _summary(flow: Flow, result: RunResult, progress: Progress) -> None:
    console = progress.console
    colour = {"completed": "green", "failed": "red", "cancelled": "yellow"}.get(
        result.status.value, "white"
    )
    console.print(
        f"\n[{colour}]Run {result.status.value}[/] in {result.duration_ms:.1f} ms "
        f"({result.steps} node executions)"
    )
    if result.error:
        console.print(f"[red]{result.error.get('message')}[/]")
    if result.result is not None:
        click.echo(f"result: {preview(result.result, 4000)}")
        return
    ends = {flow.plan.nodes[i].name for i in flow.plan.sinks}
    for name, ports in result.outputs.items():
        if name in ends:
            for port, value in ports.items():
                click.echo(f"{name}.{port}: {preview(value, 2000)}")
