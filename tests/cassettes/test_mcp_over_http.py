"""A cassette records an agent's MCP server over streamable HTTP (the MCP SDK's own
client, httpx2) and replays the session with the server gone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[1] / "nodes" / "tools" / "mcp_servers" / "arith_server.py"
SCRIPT = [
    {
        "match": {"tools": ["add"], "tool_result": False},
        "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
    },
    {"match": {"tool_result": "add"}, "reply": "The sum is {tool_result}."},
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_mcp(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the MCP test server did not start") from None
            time.sleep(0.05)


def run(*args: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nodeloom"), "run", *args, "--json", "--ephemeral"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_an_mcp_session_over_http_replays_with_the_server_gone(tmp_path, mock_llm):
    mock_llm.script(SCRIPT)
    port = free_port()
    flow = {
        "nodes": [
            {"id": "start", "type": "chat-start", "data": {}},
            {
                "id": "helper",
                "type": "agent",
                "data": {"name": "Helper", "model": "openai:gpt-4o-mini"},
            },
            {
                "id": "arith",
                "type": "mcp-server",
                "data": {"url": f"http://127.0.0.1:{port}/mcp", "allow_private_network": True},
            },
        ],
        "edges": [
            {"id": "e1", "source": "start", "target": "helper"},
            {
                "id": "e2",
                "source": "arith",
                "sourceHandle": "tools",
                "target": "helper",
                "targetHandle": "tools",
            },
        ],
    }
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow), encoding="utf-8")
    cassette = str(tmp_path / "mcp.cassette.json")
    env = {**os.environ, "OPENAI_BASE_URL": mock_llm.base_url}

    server = start_mcp(port)
    try:
        recorded = run(str(path), "--input", "add 2 and 3", "--record", cassette, env=env)
    finally:
        server.terminate()
        server.wait(timeout=10)
    mock_llm.stop()
    replayed = run(str(path), "--input", "add 2 and 3", "--replay", cassette, env=env)

    assert recorded["outputs"] == replayed["outputs"]
    assert replayed["outputs"]["Helper"]["output"]["response"] == "The sum is 5."
    urls = {i["request"]["url"] for i in json.loads(Path(cassette).read_text())["interactions"]}
    assert f"http://127.0.0.1:{port}/mcp" in urls
