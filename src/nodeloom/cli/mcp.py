"""`nodeloom mcp serve FLOW...`: the chosen saved flows as MCP tools over stdio, for
desktop MCP clients. The run store is NODELOOM_DATABASE_URL's (as `nodeloom runs`); each
call is a recorded run. Stdout carries the protocol only: messages go to stderr."""

from __future__ import annotations

import asyncio
import logging
import sys

import click

from nodeloom.errors import GraphError, NodeError
from nodeloom.store import Store, StoreError


@click.group("mcp")
def mcp_command() -> None:
    """Serve saved flows over the Model Context Protocol (see docs/api.md#mcp)."""


@mcp_command.command("serve")
@click.argument("flows", nargs=-1, required=True)
def serve_command(flows: tuple[str, ...]) -> None:
    """Serve FLOWS (saved flows' ids or names) as MCP tools over stdio.

    Each tool runs its flow's latest version; its arguments are the flow's trigger
    (a Chat Start flow takes {"message"}). Exits 2 if a flow is unknown, 1 if the run
    store fails."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        asyncio.run(_serve(flows))
    except (NodeError, GraphError) as exc:
        click.echo(f"nodeloom mcp serve: {exc}", err=True)
        raise SystemExit(2) from None
    except StoreError as exc:
        click.echo(f"nodeloom mcp serve: {exc}", err=True)
        raise SystemExit(1) from None


async def _serve(names: tuple[str, ...]) -> None:
    from mcp.server.stdio import stdio_server

    from nodeloom.publishing import PublishedFlows, mcp_server
    from nodeloom.runs import RunService

    async with await Store.open() as store:
        runs = RunService(store)
        try:
            published = PublishedFlows(runs, names)
            await published.tools()  # an unknown flow: say so before serving
            server = mcp_server(published)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            await runs.aclose()
