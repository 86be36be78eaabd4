"""`nodeloom eval`: run a flow over a dataset and score it; `eval list`, `eval compare`."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from nodeloom.cli.mock import mock_llm, mock_llm_option
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import EXIT_INVALID
from nodeloom.errors import GraphError
from nodeloom.evaluation import (
    DatasetError,
    ScorerError,
    evaluate,
    flow_version,
    make_scorers,
    read_dataset,
    store,
    summary,
)
from nodeloom.evaluation.answer import text_of
from nodeloom.evaluation.compare import mean_score, pair_rows, tally
from nodeloom.evaluation.dataset import Dataset

EXIT_BELOW = 1


class _EvalGroup(click.Group):
    """`nodeloom eval FLOW DATASET` runs an evaluation; `eval list` and `eval compare`
    are sub-commands."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


@click.group("eval", cls=_EvalGroup)
def eval_command() -> None:
    """Evaluate a flow over a dataset: `nodeloom eval FLOW DATASET`, `eval list`,
    `eval compare A B`. See docs/testing.md#evaluations."""


@eval_command.command("run")
@click.argument("flow_file", type=click.Path())
@click.argument("dataset_file", type=click.Path())
@click.option(
    "--scorer",
    "scorers",
    multiple=True,
    help="exact (default), contains, "
    "json-subset, regex, numeric[:TOLERANCE], llm-judge; repeatable.",
)
@click.option("--judge-model", help="The llm-judge's model, e.g. openai:gpt-4o-mini.")
@click.option("--rubric", help="The llm-judge's rubric (its system prompt), or @FILE.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--output",
    "output_node",
    metavar="NODE",
    help="Score this node's output (default: the end node that fired).",
)
@click.option(
    "--version",
    "version",
    help="Label the flow version (default: the graph's "
    "`version`, else sha- and a hash of the flow).",
)
@click.option(
    "--min-score", type=click.FloatRange(0, 1), help="Exit 1 if a scorer's mean is below this."
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored evaluation as JSON.")
@mock_llm_option
def run_command(
    flow_file: str,
    dataset_file: str,
    scorers: tuple[str, ...],
    judge_model: str | None,
    rubric: str | None,
    concurrency: int,
    output_node: str | None,
    version: str | None,
    min_score: float | None,
    as_json: bool,
    mock_script: str | None,
) -> None:
    """Run FLOW over every row of DATASET (.jsonl or .csv) and score each answer.

    Exit codes: 0 done, 1 a scorer's mean is below --min-score, 2 invalid input.
    """
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if rubric and rubric.startswith("@"):
            rubric = Path(rubric[1:]).read_text(encoding="utf-8")
        chosen = make_scorers(scorers or ("exact",), judge_model=judge_model, rubric=rubric)
        dataset = read_dataset(dataset_file)
        flow = load(flow_file)
        record = asyncio.run(
            _evaluate(flow, dataset, chosen, concurrency, output_node, mock_script, console)
        )
    except (GraphError, DatasetError, ScorerError, OSError) as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        sys.exit(EXIT_INVALID)
    record["flow"].update(path=str(flow_file), version=version or flow_version(flow))
    store.save(record)
    if as_json:
        click.echo(json.dumps(record, ensure_ascii=False, default=str))
    else:
        _print_evaluation(record)
    low = [
        name
        for name, mean in record["summary"].items()
        if min_score is not None and mean < min_score
    ]
    sys.exit(EXIT_BELOW if low else 0)


async def _evaluate(
    flow: Flow,
    dataset: Dataset,
    scorers: list[Any],
    concurrency: int,
    output_node: str | None,
    mock_script: str | None,
    console: Console,
) -> dict[str, Any]:
    began = time.time()
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("evaluating", total=len(dataset.rows))
        async with mock_llm(mock_script), flow:
            rows = await evaluate(
                flow,
                dataset.rows,
                scorers,
                concurrency=concurrency,
                output_node=output_node,
                on_row=lambda _: progress.advance(task),
            )
    names = [s.name for s in scorers]
    return {
        "id": store.new_id(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began)),
        "duration_s": round(time.time() - began, 3),
        "flow": {"name": flow.name},
        "dataset": {"path": str(dataset.path), "sha256": dataset.digest, "rows": len(rows)},
        "scorers": [getattr(s, "describe", lambda: {})() | {"name": s.name} for s in scorers],
        "summary": summary(rows, names),
        "rows": [row.to_json() for row in rows],
    }


def _print_evaluation(record: dict[str, Any]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    names = list(record["summary"])
    table = Table("row", "status", *names, "answer", box=None, pad_edge=False)
    for row in record["rows"]:
        scores = [_score(row["scores"][n]["score"]) for n in names]
        table.add_row(escape(row["id"]), row["status"], *scores, escape(_preview(row["answer"])))
    console.print(table)
    means = ", ".join(f"{n} {record['summary'][n]:.2f}" for n in names)
    flow = record["flow"]
    console.print(
        f"{record['dataset']['rows']} rows in {record['duration_s']:.1f} s; mean {means}\n"
        f"stored as {record['id']} ({flow.get('name') or flow['path']} version {flow['version']})"
    )


@eval_command.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per evaluation.")
def list_command(as_json: bool) -> None:
    """The stored evaluations, oldest first."""
    records = store.load_all()
    if as_json:
        for r in records:
            click.echo(json.dumps({k: v for k, v in r.items() if k != "rows"}, default=str))
        return
    console = Console(highlight=False, soft_wrap=True)
    table = Table("id", "flow", "version", "rows", "mean scores", box=None, pad_edge=False)
    for r in records:
        means = ", ".join(f"{n} {v:.2f}" for n, v in r["summary"].items())
        table.add_row(
            r["id"],
            escape(str(r["flow"].get("name"))),
            r["flow"]["version"],
            str(r["dataset"]["rows"]),
            means,
        )
    console.print(table)


@eval_command.command("compare")
@click.argument("first")
@click.argument("second")
@click.option("--json", "as_json", is_flag=True, help="The paired rows as JSON.")
def compare_command(first: str, second: str, as_json: bool) -> None:
    """Two evaluations side by side, row by row. FIRST and SECOND are evaluation ids (or
    prefixes), flow versions, or FLOW@VERSION."""
    try:
        a, b = store.find(first), store.find(second)
    except store.EvaluationNotFound as exc:
        Console(stderr=True).print(f"[red]{escape(str(exc))}[/]")
        sys.exit(EXIT_INVALID)
    pairs = pair_rows(a, b)
    counts = tally(pairs)
    if as_json:
        rows = [
            {"id": p.id, "input": p.input, "expected": p.expected, "a": p.a, "b": p.b}
            for p in pairs
        ]
        click.echo(
            json.dumps({"a": a["id"], "b": b["id"], "tally": counts, "rows": rows}, default=str)
        )
        return
    console = Console(highlight=False, soft_wrap=True)
    va, vb = a["flow"]["version"], b["flow"]["version"]
    table = Table(
        "row", "input", f"A {va}", "score", f"B {vb}", "score", "", box=None, pad_edge=False
    )
    for p in pairs:
        sa, sb = mean_score(p.a), mean_score(p.b)
        mark = (
            ""
            if sa is None or sb is None or sa == sb
            else ("[green]▲[/]" if sb > sa else "[red]▼[/]")
        )
        table.add_row(
            escape(p.id),
            escape(_preview(p.input, 30)),
            escape(_preview(p.a["answer"] if p.a else "—", 30)),
            _score(sa),
            escape(_preview(p.b["answer"] if p.b else "—", 30)),
            _score(sb),
            mark,
        )
    console.print(table)
    for name in sorted(set(a["summary"]) | set(b["summary"])):
        left, right = a["summary"].get(name), b["summary"].get(name)
        console.print(f"{name}: A {_score(left)} → B {_score(right)}")
    if a["dataset"]["sha256"] != b["dataset"]["sha256"]:
        console.print(
            "[yellow]the two evaluations used different datasets; rows are paired by id[/]"
        )
    console.print(
        f"B is better on {counts['better']} rows, worse on {counts['worse']}, "
        f"the same on {counts['same']}"
        + (f"; {counts['unpaired']} unpaired" if counts["unpaired"] else "")
    )


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _preview(value: Any, width: int = 60) -> str:
    text = " ".join(text_of(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"
