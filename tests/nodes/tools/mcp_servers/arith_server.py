"""A real MCP server for the MCP Server node's tests (mcp 2.3.0's `MCPServer`).

    python arith_server.py                     stdio, tools `add` and `shout`
    python arith_server.py --no-tools          stdio, a server that offers no tool
    python arith_server.py --http PORT         streamable HTTP on 127.0.0.1:PORT/mcp

With ARITH_PID_FILE set, the server writes its process id there first, so a test can
check that the process is gone after the node's connection is closed. With
ARITH_SLOW_TOOL set, it offers one more tool, `write_later(path, seconds)`: it writes
`path + ".started"` (its pid and a child's), starts a child process that writes
`path + ".child"` after the same delay, sleeps, then writes `path` (side effects that take
time).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def make_server(*, with_tools: bool = True, slow_tool: bool = False) -> MCPServer:
    server = MCPServer("arith")
    if slow_tool:

        @server.tool()
        def write_later(path: str, seconds: float) -> str:
            """Write a file after some seconds (and have a child process write another)."""
            child = subprocess.Popen(["sh", "-c", f"sleep {seconds}; touch '{path}.child'"])
            Path(path + ".started").write_text(f"{os.getpid()} {child.pid}")
            time.sleep(seconds)
            Path(path).write_text("done")
            return "written"

    if with_tools:

        @server.tool()
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        @server.tool()
        def shout(text: str) -> str:
            """The text in capitals, with an exclamation mark."""
            return text.upper() + "!"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-tools", action="store_true")
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    pid_file = os.environ.get("ARITH_PID_FILE")
    if pid_file:
        Path(pid_file).write_text(str(os.getpid()))
    server = make_server(
        with_tools=not args.no_tools, slow_tool=bool(os.environ.get("ARITH_SLOW_TOOL"))
    )
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
