"""Reaching an MCP server's tools, shared by the MCP Server node and Ethan's `mcp` tools.

server       a server's settings checked into a `Server` (`read_server` reads the MCP
             Server node's parameters)
connection   connecting (stdio or streamable HTTP, SSRF guard, bounded times, the
             server's stderr in failures)
pinned       the HTTP client pinned to the addresses the guard checked
launcher     the script a stdio server is started through (dies with nodeloom)
"""

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_CALL_TIMEOUT = 60.0

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT"]
