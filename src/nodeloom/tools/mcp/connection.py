"""Connecting Agno's MCPTools to a server and making sure the agent really gets tools.

Agno's `MCPTools.connect()` logs and swallows every failure, leaving a toolkit that an
agent silently runs without. So the connection is made here step by step, each failure
becoming a NodeError that names the server and the cause:

    stdio   the server's stderr goes to a temporary file, whose last lines explain a
            server that exits at start-up; the fastmcp client is built here for that
            (Agno's own one cannot redirect stderr) and handed to MCPTools as its session
    http    a fastmcp client over streamable HTTP whose connections go only to the
            addresses the SSRF guard checked (pinned.py), handed to MCPTools as its session

Either way the handshake and the tool listing are bounded by `connect_timeout`, each tool
call by `call_timeout`, and `Connection.close()` ends the session (and the subprocess).

A stdio server is started through `launcher.py`, which kills the server's whole process
group when this process dies, even by SIGKILL: no server outlives the run that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from nodeloom.errors import NodeError
from nodeloom.net import Policy, resolve_public
from nodeloom.tools.mcp.pinned import pinned_client_factory
from nodeloom.tools.mcp.server import Server, invalid

LAUNCHER = Path(__file__).with_name("launcher.py")
HOW_TO_ALLOW = (
    "allow_private_network: true on the MCP Server node or NODELOOM_ALLOW_PRIVATE_NETWORK=1"
)
STDERR_TAIL_LINES = 15
STDERR_TAIL_BYTES = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}


def failed(server: Server, cause: str, *, code: str = "mcp_failed") -> NodeError:
    return NodeError(
        f"MCP server `{server.shown}`: {cause}",
        code=code,
        retryable=False,
        details={"server": server.shown},
    )


@dataclass
class Connection:
    """A connected MCPTools toolkit, the fastmcp client it owns (stdio) and the file that
    holds the server's stderr (stdio)."""

    tools: Any  # agno.tools.mcp.MCPTools
    client: Any = None  # fastmcp.Client, for stdio
    log: Path | None = None

    async def close(self) -> None:
        """End the session: for stdio, the server process is stopped."""
        try:
            await self.disconnect()
        finally:
            self.remove_log()

    async def disconnect(self) -> None:
        try:
            if self.tools.initialized:
                await self.tools.close()
            else:  # close() does nothing before initialisation; this unwinds a half-open one
                await self.tools.__aexit__(None, None, None)
        finally:
            if self.client is not None:
                await self.client.close()

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr, or ""."""
        if self.log is None:
            return ""
        try:
            with self.log.open("rb") as file:
                file.seek(max(0, file.seek(0, os.SEEK_END) - STDERR_TAIL_BYTES))
                text = file.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def remove_log(self) -> None:
        if self.log is not None:
            with contextlib.suppress(OSError):
                self.log.unlink()


async def connect(server: Server) -> tuple[Connection, list[str]]:
    """Connect and list the tools; returns the connection and the exposed tool names."""
    if server.url is not None:
        host, addresses = await _check_destination(server)
        connection = _http_connection(server, host, addresses)
    else:
        connection = _stdio_connection(server)
    try:
        async with asyncio.timeout(server.connect_timeout):
            if connection.client is not None:
                await connection.client.__aenter__()
            else:
                await connection.tools.__aenter__()
            names = await _register(connection.tools, server)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            await connection.disconnect()
        tail = connection.stderr_tail()
        connection.remove_log()
        if isinstance(exc, NodeError) or not isinstance(exc, Exception):
            raise
        raise _connect_failure(server, exc, tail) from exc
    return connection, names


async def _register(tools: Any, server: Server) -> list[str]:
    """Check the allow-list against what the server offers, then let Agno register the
    tools; the names the agent will see, or a NodeError."""
    listed = await tools.session.list_tools()
    offered = [tool.name for tool in (listed if isinstance(listed, list) else listed.tools)]
    if server.allow:
        missing = [name for name in server.allow if name not in offered]
        if missing:
            raise failed(
                server,
                f"`allow` names {_names(missing)}, which the server does not offer; it offers: "
                f"{', '.join(offered) or 'no tool at all'}",
                code="tool_not_found",
            )
    if not offered:
        raise failed(
            server,
            "the server offers no tools, so the agent would get none; check that it "
            "registers its tools before it starts serving",
            code="no_tools",
        )
    await tools.connect()  # Agno registers the tools (include_tools = allow)
    names = list(tools.functions)
    if not tools.initialized or not names:
        raise failed(
            server,
            f"the server lists {_names(offered)}, but Agno could not register them as tools "
            "(see the log above for Agno's error)",
            code="no_tools",
        )
    return names


def _stdio_connection(server: Server) -> Connection:
    from agno.tools.mcp import MCPTools
    from agno.utils.mcp import get_default_toolkit_name
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from mcp.client.stdio import get_default_environment

    env = {**get_default_environment(), **server.env}
    executable = _executable(server, env)
    handle, name = tempfile.mkstemp(prefix="nodeloom-mcp-", suffix=".stderr.log")
    os.close(handle)
    log = Path(name)
    transport = StdioTransport(
        command=sys.executable,
        args=["-I", str(LAUNCHER), str(os.getpid()), executable, *server.argv[1:]],
        env=env,
        keep_alive=False,  # closing the client must stop the process
        log_file=log,
    )
    client = Client(
        transport,
        timeout=server.call_timeout,
        init_timeout=server.connect_timeout,
        mode="legacy",  # what MCPTools uses: a long-lived session, as stdio servers expect
    )
    tools = MCPTools(
        session=client,
        name=get_default_toolkit_name(command=server.command),
        include_tools=list(server.allow) if server.allow else None,
        timeout_seconds=max(1, round(server.call_timeout)),
    )
    return Connection(tools=tools, client=client, log=log)


def _http_connection(server: Server, host: str, addresses: list[str]) -> Connection:
    from agno.tools.mcp import MCPTools
    from agno.utils.mcp import get_default_toolkit_name
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    assert server.url is not None
    transport = StreamableHttpTransport(
        server.url, httpx_client_factory=pinned_client_factory(host, addresses)
    )
    client = Client(
        transport,
        timeout=server.call_timeout,
        init_timeout=server.connect_timeout,
        mode="legacy",  # what MCPTools uses: a long-lived session
    )
    tools = MCPTools(
        session=client,
        name=get_default_toolkit_name(url=server.url),
        include_tools=list(server.allow) if server.allow else None,
        timeout_seconds=max(1, round(server.call_timeout)),
    )
    return Connection(tools=tools, client=client)


def _executable(server: Server, env: dict[str, str]) -> str:
    """The program to start, resolved like the system would, or a clear error."""
    if not server.argv:
        raise invalid("`command` is empty", "command")
    program = server.argv[0]
    if program in ("python", "python3"):
        # nodeloom's own interpreter: a server written with the mcp SDK installed beside
        # nodeloom runs with no setup, whatever `python` on the PATH is.
        return sys.executable
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        path = Path(program).expanduser()
        path = path if path.is_absolute() else Path.cwd() / path
        if not path.is_file():
            raise failed(server, f"cannot start it: there is no file {path}")
        if not os.access(path, os.X_OK):
            raise failed(server, f"cannot start it: {path} is not executable")
        return str(path)
    found = shutil.which(program, path=env.get("PATH"))
    if found is None:
        raise failed(
            server,
            f"cannot start it: the program {program!r} is not on the PATH; install it "
            "or write its full path",
        )
    return found


async def _check_destination(server: Server) -> tuple[str, list[str]]:
    """Refuse a URL whose host is not public, unless allowed (as HTTP Request does); the
    host and the checked addresses the connection is pinned to."""
    assert server.url is not None
    try:
        url = httpx.URL(server.url)
    except httpx.InvalidURL as exc:
        raise invalid(f"`url` is malformed ({exc}); check it for typos", "url") from None
    if url.scheme not in DEFAULT_PORTS or not url.host:
        raise invalid(
            "`url` must be an http:// or https:// URL, e.g. https://mcp.example.com/mcp", "url"
        )
    host = url.raw_host.decode("ascii")
    port = url.port or DEFAULT_PORTS[url.scheme]
    policy = Policy(allow_private=server.allow_private, how_to_allow=HOW_TO_ALLOW)
    try:
        addresses = await resolve_public(host, port, policy=policy, url=server.shown)
    except OSError as exc:
        raise failed(server, f"cannot reach it: {host} does not resolve ({exc})") from None
    return host, addresses


def _connect_failure(server: Server, exc: Exception, stderr: str) -> NodeError:
    if isinstance(exc, TimeoutError):
        cause = (
            f"no answer within connect_timeout ({server.connect_timeout:g} s): the server did "
            "not complete the MCP handshake and list its tools. Is it an MCP server speaking "
            + ("stdio?" if server.url is None else "streamable HTTP at this URL?")
        )
    else:
        cause = f"could not connect: {_describe(exc)}"
        if server.url is None:
            cause += " (the server exited or closed its output before answering)"
    if stderr:
        cause += "\nThe server's stderr ended with:\n" + _indent(stderr)
    elif server.url is None:
        cause += "\nThe server wrote nothing to stderr."
    return failed(server, cause)


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _names(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


__all__ = ["HOW_TO_ALLOW", "Connection", "connect", "failed"]
