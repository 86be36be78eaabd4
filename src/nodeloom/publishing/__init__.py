"""Saved flows published as MCP tools: `nodeloom serve` at /mcp (streamable HTTP) and
`nodeloom mcp serve FLOW...` (stdio). See docs/api.md#mcp.

    from nodeloom.publishing import PublishedFlows, mcp_server
"""

from nodeloom.publishing.flows import PublishedFlows
from nodeloom.publishing.mcp_server import mcp_server

__all__ = ["PublishedFlows", "mcp_server"]
