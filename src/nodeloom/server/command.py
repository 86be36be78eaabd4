"""`nodeloom serve` and `nodeloom token`: run the HTTP server; manage its API tokens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from nodeloom.observability.log_options import log_format_option
from nodeloom.server.config import DEFAULT_MAX_BODY_BYTES, ServerConfig, is_loopback
from nodeloom.server.tokens import TokenStore

GRACE_SECONDS = 5


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--dev", is_flag=True, help="No authentication (refused on any non-loopback address)."
)
@click.option(
    "--max-body-mb",
    default=DEFAULT_MAX_BODY_BYTES / 1024 / 1024,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Largest request body accepted (413 above it).",
)
@click.option(
    "--flows",
    "flow_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A graph file, or a folder of them, to save as flows at start-up (repeatable); "
    "a flow of the same name gets a new version only if the file changed.",
)
@click.option(
    "--public-host",
    "public_hosts",
    multiple=True,
    metavar="NAME",
    help="With --dev, a host name (besides 127.0.0.1, ::1, localhost) the server answers "
    "requests for, e.g. a tunnel's (repeatable). Other Host headers are refused.",
)
@click.option(
    "--mock-llm",
    "mock_scripts",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Serve these mock LLM scripts (repeatable; their rules in order) and point "
    "OpenAI-protocol models at them: flows run offline (docs/testing.md).",
)
@log_format_option
@click.option(
    "--queue",
    "queue",
    envvar="NODELOOM_QUEUE_URL",
    metavar="URL",
    help="Enqueue runs on this Redis queue (redis://HOST:PORT/DB) for `nodeloom worker`s "
    "instead of running them here; needs the Postgres store (docs/deployment.md). "
    "Default: NODELOOM_QUEUE_URL.",
)
def serve_command(
    host: str,
    port: int,
    dev: bool,
    max_body_mb: float,
    flow_paths: tuple[Path, ...],
    public_hosts: tuple[str, ...],
    mock_scripts: tuple[str, ...],
    log_format: str,
    queue: str | None,
) -> None:
    """Serve the HTTP API (docs/api.md). Needs a token per client
    (`nodeloom token create NAME`) unless --dev."""
    if dev and not is_loopback(host):
        click.echo(
            f"nodeloom serve: --dev turns authentication off, so it only listens on a "
            f"loopback address (127.0.0.1, ::1, localhost), not {host!r}. Drop --dev and "
            "create a token with `nodeloom token create NAME` to serve other machines.",
            err=True,
        )
        sys.exit(2)
    from nodeloom.fleet.broker import QueueConfigError, queue_url, require_postgres

    try:
        queue = queue_url(queue)
        if queue is not None:
            require_postgres(None, "nodeloom serve --queue")
    except QueueConfigError as exc:
        click.echo(f"nodeloom serve: {exc}", err=True)
        sys.exit(2)
    import uvicorn

    from nodeloom.server.app import create_app
    from nodeloom.server.log_filter import log_config

    config = ServerConfig(
        dev=dev,
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        flows=flow_paths,
        public_hosts=public_hosts,
        queue_url=queue,
        settle_heap=True,  # this process is the server's: freeze its start-up heap
    )
    if queue:
        click.echo(
            f"nodeloom serve: runs go to the queue at {queue.rpartition('@')[2]}; "
            "`nodeloom worker` runs them",
            err=True,
        )
    if dev:
        click.echo("nodeloom serve: --dev: authentication is OFF (loopback only)", err=True)
    elif not TokenStore(config.tokens_file).list():
        click.echo(
            "nodeloom serve: no API token yet, so every /api request will be refused; "
            "create one with `nodeloom token create NAME`",
            err=True,
        )
    if mock_scripts:
        _serve_mock_llm(mock_scripts)
    uvicorn.run(
        create_app(config),
        host=host,
        port=port,
        log_level="info",
        log_config=log_config("json" if log_format == "json" else "text"),  # no `?token=`
        timeout_graceful_shutdown=GRACE_SECONDS,  # open event streams do not hold a stop
    )


def _serve_mock_llm(paths: tuple[str, ...]) -> None:
    """Start the mock LLM for the life of the process; OPENAI_BASE_URL points at it."""
    import os

    from nodeloom.testing.mock_llm import MockLLM, ScriptError
    from nodeloom.testing.mock_llm.merge import merged_script

    try:
        script = merged_script(paths)
    except ScriptError as exc:
        click.echo(f"nodeloom serve: {exc}", err=True)
        sys.exit(2)
    llm = MockLLM(script).start_in_thread()
    os.environ["OPENAI_BASE_URL"] = llm.base_url
    os.environ["OPENAI_API_KEY"] = "mock-llm"
    click.echo(
        f"nodeloom serve: --mock-llm: OpenAI-protocol models answer from {len(paths)} "
        f"script(s) at {llm.base_url}, not a real provider",
        err=True,
    )


@click.group("token")
def token_command() -> None:
    """Manage the server's API tokens (kept hashed in <data dir>/tokens.json)."""


@token_command.command("create")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the token and its id as JSON.")
def create(name: str, as_json: bool) -> None:
    """Create a token named NAME and print it (it is shown only this once)."""
    info, token = _tokens().create(name)
    if as_json:
        click.echo(json.dumps({"id": info.id, "name": info.name, "token": token}))
        return
    click.echo(token)
    click.echo(
        f"token {info.id} ({info.name}) created; it is shown only now: keep it safe. "
        f"Send it as `Authorization: Bearer <token>`.",
        err=True,
    )


@token_command.command("list")
@click.option("--json", "as_json", is_flag=True)
def list_tokens(as_json: bool) -> None:
    """List the tokens (ids and names, never the tokens)."""
    tokens = _tokens().list()
    if as_json:
        rows = [{"id": t.id, "name": t.name, "created_at": t.created_at} for t in tokens]
        click.echo(json.dumps(rows))
        return
    for token in tokens:
        click.echo(f"{token.id}  {token.name}  {token.created_at}")
    if not tokens:
        click.echo("no tokens; create one with `nodeloom token create NAME`", err=True)


@token_command.command("revoke")
@click.argument("token_id")
def revoke(token_id: str) -> None:
    """Revoke the token with id TOKEN_ID (a running server refuses it at once)."""
    try:
        info = _tokens().revoke(token_id)
    except KeyError as exc:
        click.echo(f"nodeloom token revoke: {exc.args[0]}", err=True)
        sys.exit(2)
    click.echo(f"token {info.id} ({info.name}) revoked", err=True)


def _tokens() -> TokenStore:
    store = TokenStore(ServerConfig().tokens_file)
    try:
        store.list()
    except ValueError as exc:
        click.echo(f"nodeloom token: {exc}", err=True)
        sys.exit(1)
    return store
