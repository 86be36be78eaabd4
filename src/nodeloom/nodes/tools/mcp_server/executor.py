"""MCP Server: connect to an MCP server at build time and offer its tools to an Agent.

The connection lives as long as the build: the engine calls the cleanup registered with
`context.on_close` when it drops the build (a chat's builds are reused across turns), and
that ends the session and stops a stdio server's process.
"""

from __future__ import annotations

from typing import Any

from nodeloom.plugins.contract import BuildContext, ToolsResult
from nodeloom.tools.mcp.connection import connect
from nodeloom.tools.mcp.server import read_server


class McpServerExecutor:
    node_type = "mcp-server"

    async def build(self, data: dict[str, Any], context: BuildContext) -> ToolsResult:
        server = read_server(data, context)
        connection, names = await connect(server)
        context.on_close(connection.close)
        return ToolsResult(tools=[connection.tools], names=names, source=server.source)


executor = McpServerExecutor()
