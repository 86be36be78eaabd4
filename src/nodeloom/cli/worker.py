"""`nodeloom worker`: take runs off the queue of a queue deployment (docs/deployment.md)."""

from __future__ import annotations

import os
import sys

import click

from nodeloom.observability.log_options import log_format_option


@click.command("worker")
@click.option(
    "--queue",
    "queue",
    envvar="NODELOOM_QUEUE_URL",
    metavar="URL",
    help="The Redis queue's URL, redis://HOST:PORT/DB (default: NODELOOM_QUEUE_URL).",
)
@click.option(
    "--processes",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Worker processes (each started again if it dies).",
)
@click.option(
    "--concurrency",
    default=10,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Runs at once per process (on its asyncio loop).",
)
@click.option(
    "--grace",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="On SIGTERM, seconds the runs going on get to end before they are handed back "
    "(recorded interrupted and resumed by another worker from their checkpoints).",
)
@log_format_option
def worker_command(
    queue: str | None, processes: int, concurrency: int, grace: float, log_format: str
) -> None:
    """Run the jobs (runs, resumes, re-runs) servers started with --queue enqueue, on the
    Postgres run store (NODELOOM_DATABASE_URL) they share."""
    from nodeloom.fleet.broker import QueueConfigError, queue_url, require_postgres
    from nodeloom.fleet.processes import supervise

    try:
        url = queue_url(queue)
        if url is None:
            raise QueueConfigError(
                "nodeloom worker needs the queue's URL: --queue redis://HOST:PORT/DB or "
                "NODELOOM_QUEUE_URL (the one the servers use)"
            )
        require_postgres(None, "nodeloom worker")
    except QueueConfigError as exc:
        click.echo(f"nodeloom worker: {exc}", err=True)
        sys.exit(2)
    env = {**os.environ, "NODELOOM_QUEUE_URL": url, "NODELOOM_LOG_FORMAT": log_format}
    sys.exit(supervise(processes, concurrency, grace, env))
