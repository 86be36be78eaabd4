import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type


@pytest.fixture
async def closing():
    """Flows that compiled agents hold HTTP clients until closed."""
    flows = []

    def load(document):
        flows.append(nodeloom.load(document))
        return flows[-1]

    yield load
    for flow in flows:
        await flow.aclose()


def single_agent(**data):
    return graph(
        node("start", "chat-start"), node("a", "agent", name="Helper", **data), edge("start", "a")
    )


async def test_an_agent_answers_its_input_with_response_model_and_tokens(mock_llm, closing):
    mock_llm.script([{"match": {"last_message": {"equals": "hi"}}, "reply": "hello human"}])
    result = await closing(single_agent(instructions="Be nice.")).run("hi")
    assert result.status is RunStatus.COMPLETED
    output = result.outputs["Helper"]["output"]
    assert output["response"] == "hello human" and output["model"] == "openai:gpt-4o-mini"
    assert output["tokens_used"]["total_tokens"] > 0
    assert result.usage == output["tokens_used"]
    system = mock_llm.requests[0].messages[0]
    assert "Be nice." in system["content"]


async def test_the_agents_tokens_stream_in_order_before_it_completes(mock_llm, closing):
    mock_llm.script([{"reply": "alpha beta gamma"}])
    sink = nodeloom.ListSink()
    await closing(single_agent()).run("go", sink=sink)
    tokens = of_type(sink.events, "progress", "a")
    assert "".join(e.data["token"] for e in tokens) == "alpha beta gamma"
    assert of_type(sink.events, "completed", "a")[0].seq > tokens[-1].seq


async def test_the_conversation_is_remembered_per_chat_id_across_turns(mock_llm, closing):
    mock_llm.script(
        [
            {"match": {"last_message": {"contains": "name is"}}, "reply": "Noted."},
            {"reply": "You are Ada."},
        ]
    )
    flow = closing(single_agent())
    await flow.run("My name is Ada", chat_id="chat-1")
    await flow.run("Who am I?", chat_id="chat-1")
    second = [m["content"] for m in mock_llm.requests[1].messages]
    assert "My name is Ada" in second and "Noted." in second
    await flow.run("Who am I?", chat_id="chat-2")
    third = [m["content"] for m in mock_llm.requests[2].messages]
    assert "My name is Ada" not in third


async def test_history_can_be_turned_off(mock_llm, closing):
    mock_llm.script([{"reply": "ok"}])
    flow = closing(single_agent(history=False))
    await flow.run("first", chat_id="c")
    await flow.run("second", chat_id="c")
    assert "first" not in [m["content"] for m in mock_llm.requests[1].messages]


async def test_a_sub_agent_makes_a_team_that_delegates_to_it(mock_llm, closing):
    mock_llm.script(
        [
            {
                "match": {"tools": ["delegate_task_to_member"], "tool_result": False},
                "tool_calls": [
                    {
                        "name": "delegate_task_to_member",
                        "arguments": {"member_id": "writer", "task": "write a haiku"},
                    }
                ],
            },
            {"match": {"last_message": {"contains": "haiku"}}, "reply": "old pond, frog jumps"},
            {"match": {"tool_result": True}, "reply": "Here it is: {tool_result}"},
        ]
    )
    doc = graph(
        node("start", "chat-start"),
        node("lead", "agent", name="Lead", instructions="Delegate writing."),
        node("writer", "agent", name="Writer", description="Writes poems."),
        edge("start", "lead"),
        edge("writer", "lead", "agent", "tools"),
    )
    sink = nodeloom.ListSink()
    result = await closing(doc).run("a poem please", sink=sink)
    assert result.status is RunStatus.COMPLETED, result.error
    assert "old pond, frog jumps" in result.outputs["Lead"]["output"]["response"]
    assert "Writer" not in result.outputs, "a sub-agent is not a flow node"
    agent_events = [e.data for e in of_type(sink.events, "agent_event", "lead")]
    started = [d for d in agent_events if d["event"] == "ToolCallStarted"]
    assert started[0]["tool"] == "delegate_task_to_member"
    assert started[0]["arguments"]["member_id"] == "writer"
    assert any(d["event"].startswith("Member") and d["agent"] == "Writer" for d in agent_events)


async def test_compiled_clusters_are_reused_across_turns(mock_llm, closing):
    flow = closing(single_agent(instructions="Static."))
    first = await flow.build()
    assert await flow.build() is first
    changed = closing(single_agent(instructions="Reply to {{ $trigger.message }}"))
    assert await changed.build("one") is not await changed.build("two")


async def test_an_unconfigured_provider_fails_the_run_before_any_call(
    mock_llm, closing, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")
    sink = nodeloom.ListSink()
    result = await closing(single_agent()).run("hi", sink=sink)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "model_not_configured"
    assert result.error["node_id"] == "a" and "OPENAI_API_KEY" in result.error["message"]
    assert mock_llm.requests == [] and not of_type(sink.events, "started")


async def test_a_missing_optional_dependency_names_the_extra_to_install(closing, monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ollama" else real_find_spec(name, *a),
    )
    result = await closing(single_agent(model="ollama:llama3.2")).run("hi")
    assert result.error["code"] == "model_not_configured"
    assert "pip install 'nodeloom[ollama]'" in result.error["message"]


async def test_a_model_known_only_during_the_flow_is_compiled_then(mock_llm, closing):
    mock_llm.script([{"match": {"model": "from-input"}, "reply": "dynamic model"}])
    doc = graph(
        node("start", "chat-start"),
        node("a", "agent", model="openai:{{ $json.message }}"),
        edge("start", "a"),
    )
    result = await closing(doc).run("from-input")
    assert result.outputs["a"]["output"]["response"] == "dynamic model"
