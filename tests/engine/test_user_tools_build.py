"""A chat turn's user tools in the structural build: an MCP Server from the user tools file
merged into the root agent beside the tools wired into it, built per set of tools."""

import json
import sys
from pathlib import Path

import pytest

import nodeloom
from nodeloom.testing.builders import edge, graph, node

ROOT = Path(__file__).resolve().parents[2]
MCP_SERVER = ROOT / "tests" / "nodes" / "tools" / "mcp_servers" / "arith_server.py"


@pytest.mark.slow
async def test_a_user_picked_mcp_server_joins_the_root_agents_wired_tools(
    mock_llm, tmp_path, monkeypatch
):
    tools = {
        "arith": {"type": "mcp-server", "parameters": {"command": f"{sys.executable} {MCP_SERVER}"}}
    }
    (tmp_path / "user-tools.json").write_text(json.dumps({"tools": tools}))
    monkeypatch.setenv("NODELOOM_USER_TOOLS", str(tmp_path / "user-tools.json"))
    mock_llm.script(
        [
            {
                "match": {"tools": ["add", "current_datetime"], "tool_result": False},
                "tool_calls": [{"name": "add", "arguments": {"a": 40, "b": 2}}],
            },
            {"match": {"tool_result": "add"}, "reply": "The sum is {tool_result}."},
        ]
    )
    document = graph(
        node("start", "chat-start", includeUserTools=True),
        node("a", "agent", name="Helper"),
        node("clock", "toolset", toolsets=["datetime"]),
        edge("start", "a"),
        edge("clock", "a", "tools", "tools"),
    )
    async with nodeloom.load(document) as flow:
        picked = await flow.run("add 40 and 2", trigger={"tools": ["arith"]})
        plain = await flow.run("what time is it?")
        assert len(flow.builder._cache) == 2  # one build per set of user tools
    assert picked.outputs["Helper"]["output"]["response"] == "The sum is 42."
    assert set(mock_llm.requests[0].tools) == {"add", "shout", "current_datetime"}
    assert plain.status is nodeloom.RunStatus.COMPLETED
    assert set(mock_llm.requests[-1].tools) == {"current_datetime"}
