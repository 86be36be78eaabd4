"""Tools in a plan node: one round without `enable_tool_loop`, rounds until the model stops
with it, per-node quotas with an over-quota answer and a final call without tools, and an
answer for every call (unknown tools, bad arguments, failing tools)."""

from __future__ import annotations

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.events import of_type


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def tool_messages(result, thread: str = "main") -> list[str]:
    return [m["content"] for m in result.result["threads"][thread] if m["role"] == "tool"]


ALWAYS_LOOKUP = [
    {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", term="x")]},
    {"reply": "final: {last_message}"},
]


async def test_without_the_loop_one_round_of_tool_calls_is_followed_by_a_final_call_without_tools(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(ALWAYS_LOOKUP)
    plan = {"nodes": [step("Ask", prompt="define x", tools=["lookup"], tools_limit={"lookup": 5})]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert result.status is RunStatus.COMPLETED, result.error
    first, last = mock_llm.requests
    assert first.tools == ["lookup"] and last.tools == []
    assert last.messages[-1] == {
        "role": "tool",
        "content": "definition of x",
        "tool_call_id": first_call_id(result),
    }
    assert result.result["content"] == "final: definition of x"


def first_call_id(result) -> str:
    calls = [m for m in result.result["threads"]["main"] if m.get("tool_calls")]
    return calls[0]["tool_calls"][0]["id"]


async def test_with_the_loop_the_model_calls_tools_until_it_answers(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(
        [
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", term="a")], "times": 1},
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", term="b")], "times": 1},
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", term="c")], "times": 1},
            {"reply": "done after {tool_result}"},
        ]
    )
    plan = {
        "nodes": [
            step(
                "Ask",
                prompt="define a, b and c",
                tools=["lookup"],
                tools_limit={"lookup": 5},
                enable_tool_loop=True,
            )
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert [r.tools for r in mock_llm.requests] == [["lookup"]] * 4
    assert tool_messages(result) == ["definition of a", "definition of b", "definition of c"]
    assert result.result["content"] == "done after definition of c"


async def test_a_call_past_the_quota_gets_an_over_quota_message_then_tools_are_withdrawn(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(
        [
            {
                "match": {"tools": ["lookup"]},
                "tool_calls": [call("lookup", term="a"), call("lookup", term="b")],
            },
            {"reply": "final"},
        ]
    )
    plan = {
        "nodes": [
            step(
                "Ask",
                prompt="define",
                tools=["lookup"],
                tools_limit={"lookup": 1},
                enable_tool_loop=True,
            )
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    answers = tool_messages(result)
    assert answers[0] == "definition of a"
    assert answers[1].startswith(
        "Error: tool 'lookup' has reached its limit of 1 call for this step"
    )
    assert [r.tools for r in mock_llm.requests] == [["lookup"], []]
    assert result.result["content"] == "final"


async def test_the_loop_ends_with_a_final_call_without_tools_once_every_quota_is_used(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(ALWAYS_LOOKUP)
    plan = {
        "nodes": [
            step(
                "Ask",
                prompt="define",
                tools=["lookup"],
                tools_limit={"lookup": 3},
                enable_tool_loop=True,
            )
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert [r.tools for r in mock_llm.requests] == [["lookup"]] * 3 + [[]]
    assert tool_messages(result) == ["definition of x"] * 3


async def test_a_tool_not_named_in_tools_limit_may_be_called_once_per_node(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(ALWAYS_LOOKUP)
    plan = {
        "nodes": [
            step("One", prompt="define", tools=["lookup"], enable_tool_loop=True),
            step("Two", prompt="again", tools=["lookup"], enable_tool_loop=True),
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert [r.tools for r in mock_llm.requests] == [["lookup"], [], ["lookup"], []]
    assert tool_messages(result) == ["definition of x", "definition of x"]


async def test_a_call_to_an_unknown_tool_is_answered_with_an_error_message(
    mock_llm, run_plan, step, tools_file
):
    """The original left such a call without an answer."""
    mock_llm.script(
        [
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("search", q="x")]},
            {"reply": "sorry"},
        ]
    )
    plan = {"nodes": [step("Ask", prompt="find", tools=["lookup"], enable_tool_loop=True)]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert result.status is RunStatus.COMPLETED, result.error
    answer = mock_llm.requests[1].messages[-1]
    assert answer["role"] == "tool"
    assert answer["content"] == (
        "Error: there is no tool named 'search' here. The tools you can call are: lookup."
    )
    assert answer["tool_call_id"] == first_call_id(result)
    assert mock_llm.requests[1].tools == []  # a round that ran nothing ends the loop
    assert result.result["content"] == "sorry"


async def test_arguments_that_are_not_json_are_answered_and_do_not_use_the_quota(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(
        [
            {
                "match": {"tools": ["lookup"]},
                "tool_calls": [{"name": "lookup", "arguments": "{not json"}],
                "times": 1,
            },
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", term="y")]},
            {"reply": "ok"},
        ]
    )
    plan = {"nodes": [step("Ask", prompt="define", tools=["lookup"])]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    (answer,) = tool_messages(result)
    assert answer.startswith("Error: tool 'lookup' was not run: its arguments are not valid JSON")


async def test_arguments_that_do_not_fit_the_signature_are_answered(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(
        [
            {"match": {"tools": ["lookup"]}, "tool_calls": [call("lookup", word="x")]},
            {"reply": "ok"},
        ]
    )
    plan = {"nodes": [step("Ask", prompt="define", tools=["lookup"])]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    (answer,) = tool_messages(result)
    assert answer.startswith("Error: tool 'lookup' was not run: its arguments do not fit")
    assert "term" in answer


async def test_a_tool_that_raises_is_answered_with_its_error_and_the_run_goes_on(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script([{"match": {"tools": ["boom"]}, "tool_calls": [call("boom")]}, {"reply": "ok"}])
    plan = {"nodes": [step("Ask", prompt="try", tools=["boom"])]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert result.status is RunStatus.COMPLETED, result.error
    assert tool_messages(result) == ["Error: tool 'boom' failed: RuntimeError: boom on purpose"]


async def test_async_tools_are_awaited(mock_llm, run_plan, step, tools_file):
    mock_llm.script(
        [
            {"match": {"tools": ["slow_lookup"]}, "tool_calls": [call("slow_lookup", term="z")]},
            {"reply": "ok"},
        ]
    )
    plan = {"nodes": [step("Ask", prompt="define", tools=["slow_lookup"])]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert tool_messages(result) == ["async definition of z"]


async def test_built_in_tools_need_no_tools_file(mock_llm, run_plan, step):
    mock_llm.script(
        [
            {"match": {"tools": ["multiply"]}, "tool_calls": [call("multiply", a=6, b=7)]},
            {"reply": "{tool_result}"},
        ]
    )
    plan = {"nodes": [step("Compute", prompt="6 x 7", tools=["multiply", "current_datetime"])]}
    result = await run_plan(plan, "task")

    assert sorted(mock_llm.requests[0].tools) == ["current_datetime", "multiply"]
    assert tool_messages(result) == ['{"operation": "multiplication", "result": 42.0}']


async def test_a_function_of_a_tools_file_takes_precedence_over_a_built_in_tool(
    mock_llm, run_plan, step, tools_file
):
    mock_llm.script(
        [{"match": {"tools": ["add"]}, "tool_calls": [call("add", a=2, b=3)]}, {"reply": "ok"}]
    )
    plan = {"nodes": [step("Sum", prompt="2 + 3", tools=["add", "multiply"])]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert tool_messages(result) == ["2 + 3 = 5 (from tools.py)"]


async def test_the_initial_tool_counts_against_its_quota(mock_llm, run_plan, step, tools_file):
    mock_llm.script(ALWAYS_LOOKUP)
    plan = {
        "nodes": [
            step(
                "Define",
                initial_tool_name="lookup",
                initial_tool_args={"term": "first"},
                prompt="more?",
                tools=["lookup"],
                enable_tool_loop=True,
            )
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    first, second = tool_messages(result)
    assert first == "definition of first"
    assert second.startswith("Error: tool 'lookup' has reached its limit of 1 call")


async def test_a_failing_initial_tool_fails_the_node(mock_llm, run_plan, step, tools_file):
    plan = {"nodes": [step("Explode", initial_tool_name="boom", prompt="x")]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "tool_failed"
    assert "boom on purpose" in result.error["message"]
    assert mock_llm.requests == []


async def test_each_tool_call_is_reported_as_a_progress_event(mock_llm, run_plan, step, tools_file):
    mock_llm.script(
        [
            {
                "match": {"tools": ["lookup"]},
                "tool_calls": [call("lookup", term="q"), call("nope")],
            },
            {"reply": "ok"},
        ]
    )
    sink = nodeloom.ListSink()
    plan = {"nodes": [step("Ask", prompt="define", tools=["lookup"])]}
    await run_plan(plan, "task", tools=[tools_file()], sink=sink)

    tools = [e.data["tool"] for e in of_type(sink.events, "progress") if "tool" in e.data]
    assert [(t["name"], t["status"]) for t in tools] == [("lookup", "ok"), ("nope", "unknown_tool")]
    assert tools[0]["arguments"] == {"term": "q"} and tools[0]["result"] == "definition of q"


async def test_a_tools_file_that_fails_to_import_fails_the_run_before_any_model_call(
    mock_llm, run_plan, step, tools_file
):
    source = "raise RuntimeError('broken on import')\n\ndef probe() -> str:\n    return 'x'\n"
    plan = {"nodes": [step("Ask", prompt="go", tools=["probe"])]}

    result = await run_plan(plan, "task", tools=[tools_file(source)])

    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "tool_not_found"
    assert "broken on import" in result.error["message"]
    assert mock_llm.requests == [] and result.steps == 0
