"""Workflow Agent: its compiled form, subagent tools, and the native graph it lives in."""

import pytest

import nodeloom
from nodeloom import GraphError, RunStatus
from nodeloom.formats.workflow.nodes.agent.subagents import tool_name
from nodeloom.testing.builders import edge, graph, node


@pytest.fixture
async def closing():
    flows = []

    def load(document):
        flows.append(nodeloom.load(document))
        return flows[-1]

    yield load
    for flow in flows:
        await flow.aclose()


def agent(node_id, **data):
    return node(node_id, "workflow-agent", activation="each", **data)


def start(**data):
    return node("start", "workflow-start", activation="each", **data)


@pytest.mark.parametrize(
    "name, node_id, tool",
    [
        ("Fact Checker", "fact_checker", "subagent_fact_checker_fact_checker"),
        ("  Ünïcode & Co. ", "node-7", "subagent_n_code_co_node_7"),
        ("", "a1", "subagent_agent_a1"),
    ],
)
def test_a_subagent_tool_is_named_after_the_agent_and_its_node(name, node_id, tool):
    assert tool_name(name, node_id) == tool


async def test_the_compiled_agent_describes_its_subagents(closing, mock_llm):
    flow = closing(
        graph(
            start(initial_input="x"),
            agent("lead", name="Lead", subagents=True),
            agent("helper", name="Helper", system_prompt="You help.\n  A lot."),
            edge("start", "lead"),
            edge("helper", "lead", "agent", "tools"),
        )
    )
    built = await flow.build()
    summary = built.results["lead"].summary
    assert summary["tools"] == ["subagent_helper_helper"]
    assert [m["node_id"] for m in summary["members"]] == ["helper"]
    [tool] = built.results["lead"].agent.tools
    assert tool.description == (
        "Delegates work to subagent Helper. System prompt: You help. A lot. Available tools: "
        "None. Nested subagents: None."
    )


async def test_wiring_a_subagent_while_the_subagents_tool_is_off_fails_before_the_flow(
    closing, mock_llm
):
    flow = closing(
        graph(
            start(initial_input="x"),
            agent("lead"),
            agent("helper"),
            edge("start", "lead"),
            edge("helper", "lead", "agent", "tools"),
        )
    )
    result = await flow.run()
    assert result.status is RunStatus.FAILED
    assert (result.error["code"], result.error["node_id"]) == ("subagents_disabled", "lead")
    assert mock_llm.requests == []


async def test_a_toolset_wired_into_its_tools_is_offered_to_the_model(closing, mock_llm):
    flow = closing(
        graph(
            start(initial_input="what time is it"),
            agent("a"),
            node("clock", "toolset", toolsets=["datetime"]),
            edge("start", "a"),
            edge("clock", "a", "tools", "tools"),
        )
    )
    await flow.run()
    assert mock_llm.requests[0].tools == ["current_datetime"]


def test_a_subagent_on_the_spine_is_refused_natively_too():
    doc = graph(
        start(),
        agent("lead", subagents=True),
        agent("helper"),
        edge("start", "lead"),
        edge("start", "helper"),
        edge("helper", "lead", "agent", "tools"),
    )
    with pytest.raises(GraphError) as caught:
        nodeloom.load(doc)
    assert "structural_on_spine" in {i.code for i in caught.value.issues}


async def test_a_model_known_only_during_the_flow_is_compiled_then(closing, mock_llm):
    flow = closing(
        graph(
            start(initial_input="gpt-4.1-nano"),
            agent("a", model="openai:{{ $json }}", user_prompt="hi"),
            edge("start", "a"),
        )
    )
    result = await flow.run()
    assert result.status is RunStatus.COMPLETED, result.error
    assert mock_llm.requests[0].model == "gpt-4.1-nano"
