from __future__ import annotations

import click
from rich.table import Table

from nodeloom.cli.output import json_line, stdout_console
from nodeloom.plugins.registry import default_registry


@click.command("nodes")
@click.option("--json", "as_json", is_flag=True, help="Print the whole catalogue as JSON.")
def nodes_command(as_json: bool) -> None:
    """List the node catalogue, and any plugin that failed to load."""
    registry = default_registry()
    if as_json:
        json_line(registry.to_json())
        return
    console = stdout_console()
    table = Table("type", "name", "category", "mode", "side effects", "origin", "load ms")
    for type_id in registry.types:
        found = registry.found(type_id)
        assert found is not None
        d = found.definition
        table.add_row(
            d.id,
            d.name,
            d.category,
            d.execution_mode,
            d.side_effects,
            found.origin,
            f"{found.load_ms:.1f}",
        )
    console.print(table)
    for failure in registry.failures:
        console.print(
            f"[red]failed to load[/] {failure.location} ({failure.origin}): {failure.error}"
        )
