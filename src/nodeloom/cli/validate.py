from __future__ import annotations

import click

from nodeloom.cli.format_options import format_options
from nodeloom.cli.output import Progress, invalid_line, json_line
from nodeloom.engine.result import EXIT_INVALID
from nodeloom.errors import GraphError
from nodeloom.formats import FormatOptions, read_graph
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import default_registry


@click.command("validate")
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON line.")
@format_options
def validate_command(file: str, as_json: bool, format_options: FormatOptions) -> None:
    """Check FILE and print every problem found, each located. Exit 2 if any."""
    try:
        issues = validate(read_graph(file, format_options)[0], default_registry()).issues
    except GraphError as exc:
        issues = exc.issues
    if as_json:
        json_line(
            invalid_line(issues) if issues else {"type": "result", "status": "valid", "errors": []}
        )
    elif issues:
        Progress().issues(issues)
    else:
        click.echo(f"{file}: valid")
    raise SystemExit(EXIT_INVALID if issues else 0)
