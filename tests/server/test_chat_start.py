"""Chat Start as the bridge (seed 003): the user's tools merged into the root agent, the
flow's steps shown or not, and the `flow_step` blocks a chat turn carries. A real server
with a user tools file, and a scripted mock LLM it reaches over HTTP."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.mock_llm import MockLLM

from .conftest import Server, read_frames, start_server, stop_server

SCRIPT = [
    {
        "match": {"tools": ["price"], "tool_result": False},
        "tool_calls": [{"name": "price", "arguments": {"item": "bread"}}],
    },
    {"match": {"tool_result": "price"}, "reply": "Answer: {tool_result}"},
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
    folder = tmp_path_factory.mktemp("chat-start")
    shop = folder / "shop.py"
    shop.write_text(
        'def price(item: str) -> str:\n    """The price of an item."""\n'
        '    return f"{item} costs 3 euros"\n'
    )
    tools = {
        "shop": {
            "type": "toolset",
            "description": "Prices of things",
            "parameters": {"functions": ["shop:price"]},
        },
        "math": {"type": "toolset", "parameters": {"toolsets": ["calculator"]}},
    }
    (folder / "user-tools.json").write_text(json.dumps({"tools": tools}))
    environment = {
        "NODELOOM_USER_TOOLS": str(folder / "user-tools.json"),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        # The server imports only allow-listed modules (docs/deployment.md#trust-model).
        "NODELOOM_PYTHON_TOOLS": "shop",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])),
    }
    started = start_server(folder, environment=environment)
    try:
        yield started
    finally:
        stop_server(started)


@pytest.fixture
def api(server: Server) -> httpx.Client:
    return server.client()


def save(api: httpx.Client, document: dict[str, Any], name: str) -> str:
    response = api.post("/api/flows", json={"name": name, "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["flow_id"])


def helper(**chat_start: Any) -> dict[str, Any]:
    """chat-start -> agent 'Helper', with nothing wired into the agent's tools."""
    return graph(
        node("start", "chat-start", **chat_start),
        node("a", "agent", name="Helper"),
        edge("start", "a"),
    )


def test_the_server_lists_the_user_tools_it_offers_by_name(api: httpx.Client):
    listed = api.get("/api/tools").json()["tools"]
    assert listed == [
        {"name": "shop", "type": "toolset", "description": "Prices of things"},
        {"name": "math", "type": "toolset", "description": ""},
    ]


def test_a_user_picked_toolset_reaches_the_root_agent_which_calls_it(
    api: httpx.Client, llm: MockLLM
):
    flow_id = save(api, helper(includeUserTools=True), "User tools on")
    reply = api.post(
        f"/api/flows/{flow_id}/chat", json={"message": "how much is bread?", "tools": ["shop"]}
    ).json()
    assert reply["status"] == "completed", reply
    assert reply["answer"] == "Answer: bread costs 3 euros"
    offered = [tool["function"]["name"] for tool in llm.requests[-2].body["tools"]]
    assert offered == ["price"]
    run = api.get(reply["run_url"]).json()
    assert run["trigger"] == {"message": "how much is bread?", "tools": ["shop"]}

    # The same flow without the user's pick: the agent has no tool, the model just answers.
    plain = api.post(f"/api/flows/{flow_id}/chat", json={"message": "hi"}).json()
    assert plain["status"] == "completed"
    assert "tools" not in llm.requests[-1].body


def test_a_turn_with_tools_is_refused_before_any_token_when_include_user_tools_is_off(
    api: httpx.Client, llm: MockLLM
):
    flow_id = save(api, helper(), "User tools off")
    requests = len(llm.requests)
    for stream in (False, True):
        response = api.post(
            f"/api/flows/{flow_id}/chat",
            json={"message": "how much is bread?", "tools": ["shop"], "stream": stream},
        )
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "user_tools_disabled"
        assert "includeUserTools" in error["message"]
    assert len(llm.requests) == requests
    assert api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"] == []


def test_a_tool_the_server_does_not_offer_is_refused_with_the_offered_names(
    api: httpx.Client,
):
    flow_id = save(api, helper(includeUserTools=True), "User tools unknown")
    response = api.post(f"/api/flows/{flow_id}/chat", json={"message": "x", "tools": ["rm"]})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "unknown_user_tool"
    assert "'rm'" in error["message"] and "math, shop" in error["message"]


def test_include_user_tools_without_an_agent_is_refused_when_the_flow_is_saved(
    api: httpx.Client,
):
    document = graph(node("start", "chat-start", includeUserTools=True))
    response = api.post("/api/flows", json={"name": "No agent", "document": document})
    assert response.status_code == 422, response.text
    (issue,) = response.json()["error"]["issues"]
    assert (issue["code"], issue["node_id"], issue["field"]) == (
        "no_root_agent",
        "start",
        "includeUserTools",
    )


def branching(server: Server, **chat_start: Any) -> dict[str, Any]:
    """chat-start -> conditional (message is "go") -> true: an HTTP Request to the server's
    /health; false: a Prompt Template (skipped when the message is "go")."""
    return graph(
        node("start", "chat-start", **chat_start),
        node("check", "conditional", name="Is go", field="message", operator="equals", value="go"),
        node(
            "fetch",
            "http-request",
            name="Health",
            url=f"{server.url}/health",
            allow_private_network=True,
        ),
        node("other", "prompt-template", name="Other", template="not go"),
        edge("start", "check"),
        edge("check", "fetch", "true"),
        edge("check", "other", "false"),
    )


def test_flow_step_blocks_carry_the_documented_summaries(api: httpx.Client, server: Server):
    flow_id = save(api, branching(server), "Flow steps")
    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "go"}).json()
    assert reply["status"] == "completed", reply
    steps = {step["node_id"]: step for step in reply["steps"]}
    assert list(steps) == ["check", "other", "fetch"]  # in the order they started
    assert steps["check"] == {
        "type": "flow_step",
        "node_id": "check",
        "node_type": "conditional",
        "node_name": "Is go",
        "status": "completed",
        "summary": "→ true",
        "detail": {"outputs": {"true": {"message": "go"}}},
        "duration_ms": steps["check"]["duration_ms"],
    }
    assert isinstance(steps["check"]["duration_ms"], int)
    assert steps["fetch"]["status"] == "completed"
    assert steps["fetch"]["summary"] == "GET 127.0.0.1 → 200"
    assert steps["fetch"]["detail"]["outputs"]["status"] == 200
    assert steps["other"]["status"] == "skipped"
    assert steps["other"]["summary"] == "no value arrived on 'input': 'Is go' did not fire 'false'"
    assert steps["other"]["duration_ms"] is None


def test_a_streamed_turn_sends_each_flow_step_after_its_node_event(api: httpx.Client, server):
    flow_id = save(api, branching(server), "Flow steps streamed")
    frames = read_frames(
        api, f"/api/flows/{flow_id}/chat", method="POST", json={"message": "go", "stream": True}
    )
    steps = [(f.data["node_id"], f.data["status"]) for f in frames if f.event == "FlowStep"]
    assert steps == [
        ("check", "started"),
        ("check", "completed"),
        ("other", "skipped"),
        ("fetch", "started"),
        ("fetch", "completed"),
    ]
    for index, frame in enumerate(frames):
        if frame.event == "FlowStep":  # right after the node's own event
            assert frames[index - 1].data["node_id"] == frame.data["node_id"]
            assert frames[index - 1].id is not None and frame.id is None
    reply = frames[-1].data
    assert [s["summary"] for s in reply["steps"]][-1] == "GET 127.0.0.1 → 200"


def test_show_flow_steps_off_answers_without_steps_while_the_run_records_every_node(
    api: httpx.Client, server: Server
):
    flow_id = save(api, branching(server, showFlowSteps=False), "Flow steps hidden")
    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "go"}).json()
    assert reply["status"] == "completed" and reply["steps"] == []
    assert json.loads(reply["answer"])["status"] == 200

    frames = read_frames(
        api, f"/api/flows/{flow_id}/chat", method="POST", json={"message": "go", "stream": True}
    )
    names = [f.event for f in frames]
    assert names == ["ChatTurn", "run_started", "run_completed", "ChatReply"]
    assert frames[-1].data["steps"] == []

    recorded = read_frames(api, reply["events_url"])
    done = {(f.data["node_id"], f.data["event_type"]) for f in recorded if f.data["node_id"]}
    assert {("start", "completed"), ("check", "completed"), ("fetch", "completed")} <= done
    assert ("other", "skipped") in done


def test_the_openai_endpoint_sends_flow_step_blocks_only_when_asked(
    api: httpx.Client, server: Server
):
    flow_id = save(api, branching(server), "Flow steps v1")
    body = {"model": flow_id, "messages": [{"role": "user", "content": "go"}]}
    plain = api.post("/v1/chat/completions", json=body).json()
    assert "steps" not in plain["nodeloom"]
    asked = api.post("/v1/chat/completions", json={**body, "flow_steps": True}).json()
    summaries = [(s["node_id"], s["summary"]) for s in asked["nodeloom"]["steps"]]
    assert summaries[0] == ("check", "→ true") and summaries[-1][1] == "GET 127.0.0.1 → 200"

    chunks = []
    with api.stream(
        "POST", "/v1/chat/completions", json={**body, "stream": True, "flow_steps": True}
    ) as response:
        for line in response.iter_lines():
            if line.startswith("data: {"):
                chunks.append(json.loads(line.removeprefix("data: ")))
    (carrier,) = [c for c in chunks if "nodeloom" in c]
    assert carrier["choices"] == [] and carrier["object"] == "chat.completion.chunk"
    assert [s["node_id"] for s in carrier["nodeloom"]["steps"]] == ["check", "other", "fetch"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_a_runs_flow_steps_are_served_from_its_record(api: httpx.Client, server: Server):
    flow_id = save(api, branching(server), "Flow steps of a run")
    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "go"}).json()
    served = api.get(f"/api/runs/{reply['run_id']}/steps").json()
    assert served["show_flow_steps"] is True
    assert served["steps"] == reply["steps"]
    assert api.get("/api/runs/nope/steps").status_code == 404
