"""The root agent (the Agent a chat turn's user tools are merged into) and the rule that
`includeUserTools` needs one."""

import pytest

import nodeloom
from nodeloom.errors import GraphError
from nodeloom.graph.root_agent import root_agent
from nodeloom.testing.builders import edge, graph, node


def checked(document):
    return nodeloom.load(document).checked


def test_the_root_agent_is_the_agent_reached_first_from_chat_start():
    document = graph(
        node("start", "chat-start"),
        node("far", "agent", name="Far"),
        node("t", "prompt-template", template="x"),
        node("near", "agent", name="Near"),
        edge("start", "t"),
        edge("t", "far"),
        edge("start", "near"),
    )
    flow = checked(document)
    assert root_agent(flow.graph, flow.structure) == "near"


def test_a_sub_agent_is_never_the_root_agent():
    document = graph(
        node("start", "chat-start"),
        node("boss", "agent", name="Boss"),
        node("helper", "agent", name="Helper"),
        edge("start", "boss"),
        edge("helper", "boss", "agent", "tools"),
    )
    flow = checked(document)
    assert root_agent(flow.graph, flow.structure) == "boss"


def test_include_user_tools_without_an_agent_is_an_invalid_graph_naming_the_flag():
    document = graph(
        node("start", "chat-start", includeUserTools=True),
        node("t", "prompt-template", template="x"),
        edge("start", "t"),
    )
    with pytest.raises(GraphError) as caught:
        nodeloom.load(document)
    (issue,) = caught.value.issues
    assert (issue.code, issue.node_id, issue.field) == (
        "no_root_agent",
        "start",
        "includeUserTools",
    )


async def test_a_run_with_tools_is_refused_before_it_starts_when_the_flag_is_off():
    document = graph(node("start", "chat-start"), node("a", "agent", name="A"), edge("start", "a"))
    sink = nodeloom.ListSink()
    async with nodeloom.load(document) as flow:
        with pytest.raises(GraphError) as caught:
            await flow.run("hi", trigger={"tools": ["math"]}, sink=sink)
    (issue,) = caught.value.issues
    assert (issue.code, issue.field) == ("user_tools_disabled", "includeUserTools")
    assert "includeUserTools" in issue.message
    assert sink.events == []  # nothing ran: no event, no token


async def test_a_trigger_tools_field_is_left_alone_when_no_chat_start_takes_user_tools(mock_llm):
    document = graph(node("a", "agent", name="A", prompt="{{ $trigger.message }}"))
    async with nodeloom.load(document) as flow:
        result = await flow.run(trigger={"message": "hi", "tools": ["not", "user", "tools"]})
    assert result.status.value == "completed", result.error
    assert "tools" not in mock_llm.requests[-1].body
