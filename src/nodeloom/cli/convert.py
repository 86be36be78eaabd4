from __future__ import annotations

import json
from pathlib import Path

import click

from nodeloom.cli.format_options import format_options
from nodeloom.cli.output import Progress
from nodeloom.engine.result import EXIT_INVALID
from nodeloom.errors import GraphError
from nodeloom.formats import FormatOptions, read_graph
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import default_registry


@click.command("convert")
@click.argument("file", type=click.Path())
@click.option("-o", "--output", type=click.Path(), help="Write here instead of stdout.")
@format_options
def convert_command(file: str, output: str | None, format_options: FormatOptions) -> None:
    """Write FILE (any format nodeloom reads) as a native graph JSON that the editor opens.
    The result is validated first; exit 2 if the file or the converted graph is invalid."""
    try:
        document, _ = read_graph(file, format_options)
        validate(document, default_registry()).raise_for_issues()
    except GraphError as exc:
        Progress().issues(exc.issues)
        raise SystemExit(EXIT_INVALID) from None
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
