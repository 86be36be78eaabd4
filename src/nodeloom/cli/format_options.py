"""Options every command that reads a graph file accepts, for the foreign formats."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from nodeloom.errors import GraphError, Issue
from nodeloom.formats import FormatOptions


def format_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --var, --pattern, --tools and --max-subgraph-depth, and passes the command a
    `format_options` FormatOptions built from them (the FILE's folder is the base dir)."""

    @click.option(
        "--var",
        "variables",
        multiple=True,
        metavar="KEY=VALUE",
        help="plan.json: fill {KEY} placeholders (repeatable).",
    )
    @click.option("--pattern", help="plan.json: the pattern to run when the file has several.")
    @click.option(
        "--tools",
        "tool_files",
        multiple=True,
        type=click.Path(),
        help="plan.json: a Python file whose functions are tools (repeatable).",
    )
    @click.option(
        "--max-subgraph-depth",
        type=click.IntRange(min=1),
        help="Ethan YAML: how deep subgraphs may nest (default 8).",
    )
    @functools.wraps(command)
    def wrapper(
        *args: Any,
        variables: tuple[str, ...],
        pattern: str | None,
        tool_files: tuple[str, ...],
        max_subgraph_depth: int | None,
        **kwargs: Any,
    ) -> Any:
        file = kwargs.get("file")
        base = Path(file).resolve().parent if file else Path.cwd()
        kwargs["format_options"] = FormatOptions(
            variables=_pairs(variables),
            pattern=pattern,
            tools=tuple(str(Path(t).resolve()) for t in tool_files),
            max_subgraph_depth=max_subgraph_depth,
            base_dir=base,
        )
        return command(*args, **kwargs)

    return wrapper


def _pairs(values: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise GraphError([Issue("invalid_request", f"--var takes KEY=VALUE, got {value!r}")])
        pairs[key] = text
    return pairs
