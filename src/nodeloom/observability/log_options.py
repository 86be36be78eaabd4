"""The `--log-format` option shared by `nodeloom serve` and `nodeloom worker`:

@click.command("worker")
@log_format_option
def worker_command(log_format: str, ...) -> None:
    configure_logging(log_format)          # nodeloom.observability.logs
"""

from __future__ import annotations

import click

from nodeloom.observability.logs import LOG_FORMATS

log_format_option = click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    default="text",
    show_default=True,
    envvar="NODELOOM_LOG_FORMAT",
    help="json: one JSON object per line (time, level, logger, message, run_id, node_id), "
    "nodeloom's own loggers included (docs/observability.md). Also NODELOOM_LOG_FORMAT.",
)
