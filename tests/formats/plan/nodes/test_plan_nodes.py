"""The plan-* node types on their own, in native graphs written by hand: what each does, what
its definition checks, and what phase 1 checks before any model call."""

from __future__ import annotations

import pytest

import nodeloom
from nodeloom import GraphError, RunStatus
from nodeloom.testing.builders import chain, edge, graph, node


def start(**data):
    return node("start", "plan-start", **data)


def finish():
    return node("finish", "plan-finish")


def llm(node_id="a", **data):
    return node(node_id, "plan-llm-first", **{"thread_id": "main", **data})


async def run(document, message=None):
    flow = nodeloom.load(document)
    async with flow:
        return await flow.run(message)


# -- plan-start ----------------------------------------------------------------------------


async def test_plan_start_puts_the_run_message_first_in_the_main_thread():
    result = await run(chain(start(task="fallback"), finish()), "the message")

    assert result.outputs["start"]["output"] == {"task": "the message"}
    assert result.result["threads"] == {"main": [{"role": "user", "content": "the message"}]}


async def test_plan_start_falls_back_to_its_task_parameter():
    result = await run(chain(start(task="fallback"), finish()))

    assert result.result["threads"]["main"][0]["content"] == "fallback"


async def test_plan_start_without_any_task_fails_with_missing_task():
    result = await run(chain(start(), finish()))

    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "missing_task"


# -- plan-llm-first / plan-tool-first ------------------------------------------------------


async def test_a_plan_node_without_plan_start_fails_naming_what_is_missing():
    result = await run(chain(node("chat", "chat-start"), llm(), finish()), "x")

    assert result.error["code"] == "invalid_input"
    assert "Plan Start" in result.error["message"]


async def test_a_plan_node_seeded_from_a_thread_that_does_not_exist_fails(mock_llm):
    document = chain(start(), llm(thread_id="new", data_in_thread="ghost"), finish())

    result = await run(document, "x")

    assert result.error["code"] == "invalid_input"
    assert "thread 'ghost'" in result.error["message"]


async def test_a_hand_built_graph_wires_a_toolset_into_a_plan_node(mock_llm):
    mock_llm.script(
        [
            {
                "match": {"tools": ["add"]},
                "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
            },
            {"reply": "{tool_result}"},
        ]
    )
    document = graph(
        start(),
        llm(task_prompt="1 + 2", tools=["add"]),
        finish(),
        node("calc", "toolset", toolsets=["calculator"]),
        edge("start", "a"),
        edge("a", "finish"),
        edge("calc", "a", "tools", "tools"),
    )

    result = await run(document, "x")

    assert result.status is RunStatus.COMPLETED, result.error
    assert result.result["content"] == '{"operation": "addition", "result": 3.0}'


async def test_a_tool_no_wired_toolset_offers_fails_the_build_before_any_call(mock_llm):
    document = chain(start(), llm(task_prompt="go", tools=["lookup"]), finish())

    result = await run(document, "x")

    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "tool_not_found"
    assert "lookup" in result.error["message"]
    assert mock_llm.requests == []


async def test_the_model_is_checked_in_phase_1_when_the_node_has_a_task_prompt(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    document = chain(start(), llm(task_prompt="go"), finish())

    result = await run(document, "x")

    assert result.error["code"] == "model_not_configured"
    assert result.steps == 0


async def test_a_node_without_a_task_prompt_needs_no_model(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")

    result = await run(chain(start(), llm(), finish()), "x")

    assert result.status is RunStatus.COMPLETED, result.error


async def test_the_model_parameters_of_a_plan_node_are_used(mock_llm):
    mock_llm.script([{"reply": "ok"}])
    document = chain(
        start(), llm(task_prompt="go", model="openai:custom-model", temperature=0.3), finish()
    )

    await run(document, "x")

    assert mock_llm.requests[0].model == "custom-model"
    assert mock_llm.requests[0].body["temperature"] == 0.3


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"tools_limit": {"add": 0}}, "tools_limit"),
        ({"tools_limit": {"add": True}}, "tools_limit"),
        ({"data_in_slice": [0]}, "data_in_slice"),
        ({"data_in_slice": [0, "x"]}, "data_in_slice"),
        ({"tools": "add"}, "tools"),
        ({"thread_id": " "}, "thread_id"),
        ({"data_out_thread": ""}, "data_out_thread"),
    ],
)
def test_the_definition_checks_the_shapes_of_its_parameters(data, field):
    with pytest.raises(GraphError) as raised:
        nodeloom.load(chain(start(), llm(**data), finish()))

    assert [(i.code, i.node_id, i.field) for i in raised.value.issues] == [
        ("invalid_parameter", "a", field)
    ]


def test_a_tool_first_node_requires_its_initial_tool():
    document = chain(start(), node("t", "plan-tool-first", thread_id="main"), finish())

    with pytest.raises(GraphError) as raised:
        nodeloom.load(document)

    assert [(i.code, i.field) for i in raised.value.issues] == [
        ("missing_parameter", "initial_tool_name")
    ]


# -- plan-finish ---------------------------------------------------------------------------


async def test_plan_finish_sets_the_result_and_removes_the_threads_from_the_state(mock_llm):
    mock_llm.script([{"reply": "done"}])

    result = await run(chain(start(), llm(task_prompt="go"), finish()), "x")

    assert result.outputs["finish"]["output"] == {"content": "done"}
    assert result.result["content"] == "done"
    assert result.state == {}


async def test_plan_finish_without_a_plan_fails():
    result = await run(chain(node("chat", "chat-start"), finish()), "x")

    assert result.error["code"] == "invalid_input"
