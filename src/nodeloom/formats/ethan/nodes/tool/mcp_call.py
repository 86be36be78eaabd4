"""An `mcp` tool: a tool of an MCP server, reached like the MCP Server node does
(nodeloom.tools.mcp.connection: stdio or streamable HTTP, SSRF guard,
bounded connect and call times, the server's stderr in failures).

The server is started (or reached) on the node's first call and kept for the node's
build, which the engine closes with the flow, so a loop's iterations reuse one server.
The call's arguments are the tool's `config.arguments` with the node's `inputs` over
them. The response becomes `{"status", "json" (the structured content, or the text
parsed), "text" (the text blocks), "items", "result" (the tool's value), "error" (set
when the server reports an error)}`.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any

from nodeloom.formats.ethan.nodes.tool.results import items_of, plain
from nodeloom.tools.mcp import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT
from nodeloom.tools.mcp.connection import Connection, connect
from nodeloom.tools.mcp.server import Server


def server_of(config: dict[str, Any]) -> Server:
    command = config.get("command")
    return Server(
        command=command,
        argv=tuple(shlex.split(command)) if command else (),
        url=config.get("url"),
        env={str(k): str(v) for k, v in (config.get("env") or {}).items()},
        allow=(config["tool"],),
        connect_timeout=float(config.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT),
        call_timeout=float(config.get("call_timeout") or DEFAULT_CALL_TIMEOUT),
        allow_private=bool(config.get("allow_private_network")),
    )


class Connections:
    """The node's open connection, made on first use (one at a time)."""

    def __init__(self) -> None:
        self.connection: Connection | None = None
        self.lock = asyncio.Lock()

    async def get(self, server: Server, on_close: Any) -> Connection:
        async with self.lock:
            if self.connection is None:
                connection, _ = await connect(server)
                self.connection = connection
                on_close(self.close)
            return self.connection

    async def close(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()


async def call(
    connection: Connection, server: Server, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    if connection.client is not None:  # stdio: the fastmcp client
        outcome = await connection.client.call_tool(
            name, arguments, raise_on_error=False, timeout=server.call_timeout
        )
        structured = outcome.structured_content
        data = outcome.data
        is_error = bool(outcome.is_error)
    else:  # streamable HTTP: Agno's MCP session
        outcome = await asyncio.wait_for(
            connection.tools.session.call_tool(name, arguments), server.call_timeout
        )
        structured = getattr(outcome, "structuredContent", None)
        data = None
        is_error = bool(getattr(outcome, "isError", False))
    text = "\n".join(
        block.text for block in outcome.content if getattr(block, "type", None) == "text"
    )
    value = _value(structured, data, text)
    payload = structured if structured is not None else _json(text)
    return {
        "status": 500 if is_error else 200,
        "json": plain(payload),
        "text": text,
        "items": items_of(payload),
        "result": plain(value),
        "error": {"type": "mcp_tool_error", "message": text or "the tool failed"}
        if is_error
        else None,
    }


def _value(structured: Any, data: Any, text: str) -> Any:
    """The tool's value: its structured content (a wrapped `{"result": x}` unwrapped),
    else fastmcp's decoded data if it is plain JSON, else the text (parsed if JSON)."""
    if isinstance(structured, dict) and list(structured) == ["result"]:
        return structured["result"]
    if structured is not None:
        return structured
    if isinstance(data, str | int | float | bool | list | dict):
        return data
    parsed = _json(text)
    return parsed if parsed is not None else text


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


__all__ = ["Connections", "call", "connect", "server_of"]
