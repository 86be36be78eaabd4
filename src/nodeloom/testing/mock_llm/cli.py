"""`nodeloom mock-llm`: serve a scripted, OpenAI-compatible LLM until SIGINT or SIGTERM.

The first line on stdout is the base URL (`http://127.0.0.1:PORT/v1`), so a script can
read it and point a flow at it; each request is logged on stderr unless `--quiet`.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import click

from nodeloom.testing.mock_llm.script import Script, ScriptError, load_script
from nodeloom.testing.mock_llm.server import MockLLM, RecordedRequest

EXIT_INVALID_SCRIPT = 2
EXIT_CANNOT_LISTEN = 1


@click.command("mock-llm")
@click.option(
    "--script",
    "script_file",
    type=click.Path(dir_okay=False),
    help="YAML or JSON rules to answer with (default: echo every request).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option("--quiet", is_flag=True, help="Do not log each request on stderr.")
def mock_llm_command(script_file: str | None, host: str, port: int, quiet: bool) -> None:
    """Serve a scripted, OpenAI-compatible chat model for testing flows offline.

    Prints the base URL on the first line of stdout, then serves until Ctrl+C or
    SIGTERM (exit 0). Point a flow at it with OPENAI_BASE_URL=<that URL>. Exit 2 if the
    script is invalid, 1 if the address cannot be listened on.
    """
    try:
        script = load_script(script_file) if script_file is not None else Script()
    except ScriptError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_INVALID_SCRIPT) from None
    llm = MockLLM(script, host=host, port=port, on_request=None if quiet else _log)
    raise SystemExit(asyncio.run(_serve(llm, port)))


async def _serve(llm: MockLLM, port: int) -> int:
    try:
        await llm.start()
    except OSError as exc:
        reason = exc.strerror or exc
        click.echo(f"error: cannot listen on {llm.host} port {port}: {reason}", err=True)
        return EXIT_CANNOT_LISTEN
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        click.echo(llm.base_url)
        sys.stdout.flush()
        rules = len(llm.current_script.rules)
        click.echo(f"mock LLM serving {rules} rule(s); Ctrl+C to stop", err=True)
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await llm.aclose()
    return 0


def _log(record: RecordedRequest) -> None:
    if record.rule is not None:
        answer = f" (rule {record.rule})"
    elif record.path.endswith("/chat/completions") and record.status not in (400, 401):
        answer = " (default)"
    else:
        answer = ""
    model = f" model={record.model}" if record.model else ""
    click.echo(f"{record.method} {record.path}{model} -> {record.status}{answer}", err=True)
