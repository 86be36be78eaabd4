"""An Agent's tools, through the graph: a Toolset function and a real MCP server process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nodeloom
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type

ROOT = Path(__file__).resolve().parents[3]
MCP_SERVER = ROOT / "tests" / "nodes" / "tools" / "mcp_servers" / "arith_server.py"


def agent_with(tool_node):
    return graph(
        node("start", "chat-start"),
        node("a", "agent", name="Helper"),
        tool_node,
        edge("start", "a"),
        edge(tool_node["id"], "a", "tools", "tools"),
    )


async def test_a_toolset_function_is_called_and_its_result_returned_to_the_model(
    mock_llm, tmp_path
):
    module = tmp_path / "shop.py"
    module.write_text(
        'def price(item: str) -> str:\n    """The price of an item."""\n'
        '    return f"{item} costs 3 euros"\n'
    )
    mock_llm.script(
        [
            {
                "match": {"tools": ["price"], "tool_result": False},
                "tool_calls": [{"name": "price", "arguments": {"item": "bread"}}],
            },
            {"match": {"tool_result": "price"}, "reply": "Answer: {tool_result}"},
        ]
    )
    doc = agent_with(node("shop", "toolset", functions=[f"{module}#price"]))
    sink = nodeloom.ListSink()
    async with nodeloom.load(doc) as flow:
        result = await flow.run("how much is bread?", sink=sink)
    assert result.outputs["Helper"]["output"]["response"] == "Answer: bread costs 3 euros"
    calls = [e.data for e in of_type(sink.events, "agent_event", "a")]
    assert calls[0] == {
        "event": "ToolCallStarted",
        "agent": "Helper",
        "tool": "price",
        "tool_call_id": "call_1_0",
        "arguments": {"item": "bread"},
    }
    assert calls[1]["tool_call_id"] == "call_1_0"
    assert calls[1]["result"] == "bread costs 3 euros" and calls[1]["error"] is False
    assert mock_llm.requests[1].messages[-1]["role"] == "tool"


@pytest.mark.slow
async def test_an_mcp_server_process_gives_the_agent_its_tools(mock_llm):
    mock_llm.script(
        [
            {
                "match": {"tools": ["add", "shout"], "tool_result": False},
                "tool_calls": [{"name": "add", "arguments": {"a": 40, "b": 2}}],
            },
            {"match": {"tool_result": "add"}, "reply": "The sum is {tool_result}."},
        ]
    )
    doc = agent_with(node("mcp", "mcp-server", command=f"{sys.executable} {MCP_SERVER}"))
    async with nodeloom.load(doc) as flow:
        result = await flow.run("add 40 and 2")
        second = await flow.run("again")
    assert result.outputs["Helper"]["output"]["response"] == "The sum is 42."
    assert second.status is nodeloom.RunStatus.COMPLETED
    assert set(mock_llm.requests[0].tools) == {"add", "shout"}


async def test_an_mcp_server_that_cannot_start_fails_the_run_before_any_model_call(mock_llm):
    doc = agent_with(
        node("mcp", "mcp-server", command="no-such-program --serve", connect_timeout=5)
    )
    async with nodeloom.load(doc) as flow:
        result = await flow.run("hi")
    assert result.status is nodeloom.RunStatus.FAILED
    assert result.error["code"] == "mcp_failed" and result.error["node_id"] == "mcp"
    assert mock_llm.requests == []


@pytest.mark.e2e
def test_nodeloom_plan_shows_each_cluster_with_its_tools_and_members(tmp_path):
    doc = graph(
        node("start", "chat-start"),
        node("lead", "agent", name="Lead"),
        node("tools", "toolset", toolsets=["datetime"]),
        node("sub", "agent", name="Writer"),
        edge("start", "lead"),
        edge("tools", "lead", "tools", "tools"),
        edge("sub", "lead", "agent", "tools"),
    )
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(doc))
    script = tmp_path / "mock.yaml"
    script.write_text("default: {reply: ok}\n")
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "nodeloom"),
            "plan",
            str(path),
            "--json",
            "--mock-llm",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    [cluster] = plan["clusters"]
    assert cluster["kind"] == "Team" and cluster["tools"] == ["current_datetime"]
    assert [m["node"] for m in cluster["members"]] == ["Writer"]
    assert plan["flow_nodes"] == ["start", "Lead"]
