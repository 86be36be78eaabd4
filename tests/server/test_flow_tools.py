"""A saved flow as an Agent's tool, through a real `nodeloom serve` and the scripted mock
LLM over HTTP: the model calls the flow tool, the call is a child run of the agent's run,
and the child's steps are events nested under the tool call."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.mock_llm import MockLLM

from .conftest import Server, read_frames, start_server, stop_server
from .flows import shout
from .test_runs import save

SCRIPT = [
    {
        "match": {"tools": ["shout_it"], "tool_result": False},
        "tool_calls": [{"name": "shout_it", "arguments": {"message": "quiet please"}}],
    },
    {"match": {"tool_result": "shout_it"}, "reply": "Answer: {tool_result}"},
    {
        "match": {"tools": ["breaks_it"], "tool_result": False},
        "tool_calls": [{"name": "breaks_it", "arguments": {"message": "x"}}],
    },
    {"match": {"tool_result": "breaks_it"}, "reply": "Told: {tool_result}"},
]


@pytest.fixture(scope="module")
def llm() -> Iterator[MockLLM]:
    served = MockLLM(SCRIPT).start_in_thread()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, llm: MockLLM) -> Iterator[Server]:
    environment = {
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "NODELOOM_ALLOW_PRIVATE_NETWORK": "1",
    }
    started = start_server(tmp_path_factory.mktemp("flow-tools"), environment=environment)
    try:
        yield started
    finally:
        stop_server(started)


@pytest.fixture
def api(server: Server) -> httpx.Client:
    return server.client()


def agent_with(**flow_tool: object) -> dict[str, object]:
    return graph(
        node("start", "chat-start"),
        node("a", "agent", name="Helper"),
        node("tool", "flow-tool", **flow_tool),
        edge("start", "a"),
        edge("tool", "a", "tools", "tools"),
    )


def test_an_agent_calls_a_flow_tool_which_runs_the_flow_as_a_child_run(
    api: httpx.Client, llm: MockLLM
):
    child_id = save(api, {**shout(), "description": "Shouts a message."}, name="Shout it")
    flow_id = save(api, agent_with(flow="Shout it"), name="Agent with a flow tool")

    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "say it loud"}).json()
    assert reply["status"] == "completed", reply
    assert reply["answer"] == "Answer: QUIET PLEASE"
    [offered] = llm.requests[-2].body["tools"]
    assert offered["function"]["name"] == "shout_it"
    assert offered["function"]["description"] == "Shouts a message."
    assert offered["function"]["parameters"]["required"] == ["message"]

    run = api.get(reply["run_url"]).json()
    [link] = run["children"]
    assert link["flow_id"] == child_id and link["parent_node"] == "tool"
    child = api.get(f"/api/runs/{link['id']}").json()
    assert child["status"] == "completed"
    assert child["trigger"] == {"message": "quiet please"}
    assert child["parent_run_id"] == run["id"]

    frames = read_frames(api, f"{reply['run_url']}/events")
    agent = [f.data["data"] for f in frames if f.data.get("event_type") == "agent_event"]
    started = next(d for d in agent if d["event"] == "ToolCallStarted")
    nested = [d for d in agent if d["event"] == "ToolCallProgress"]
    assert nested, agent
    assert {d["tool_call_id"] for d in nested} == {started["tool_call_id"]}
    assert {d["child_run_id"] for d in nested} == {link["id"]}
    assert ("completed", "Shout") in {(d["child_event"], d["node_name"]) for d in nested}
    completed = next(d for d in agent if d["event"] == "ToolCallCompleted")
    assert completed["result"] == "QUIET PLEASE"


def test_a_flow_tool_whose_child_fails_gives_the_model_the_error_and_the_agent_goes_on(
    api: httpx.Client,
):
    save(
        api, chain(node("start", "chat-start"), node("boom", "fail", message="no stock")), "Breaks"
    )
    flow_id = save(
        api, agent_with(flow="Breaks", tool_name="breaks_it"), name="Agent, failing tool"
    )

    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "try it"}).json()
    assert reply["status"] == "completed", reply
    assert reply["answer"].startswith("Told: the flow 'Breaks' ended failed:")
    assert "no stock" in reply["answer"]
    run = api.get(reply["run_url"]).json()
    child = api.get(f"/api/runs/{run['children'][0]['id']}").json()
    assert child["status"] == "failed" and child["parent_run_id"] == run["id"]
