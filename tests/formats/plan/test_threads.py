"""Threads and the data flow between them: the main thread and its task, data_in_*, data_out,
empty nodes, the content and the result. Every run is real: the plan is converted and run
on the engine, the model is the mock LLM over HTTP."""

from __future__ import annotations

from nodeloom import RunStatus


def roles(request) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in request.messages]


async def test_the_main_thread_starts_with_the_run_message_as_its_first_user_message(
    mock_llm, run_plan, step, thread_of
):
    mock_llm.script([{"reply": "It is fine."}])
    result = await run_plan({"nodes": [step("Analyze", prompt="Analyze this data")]}, "sales: 3")

    assert result.status is RunStatus.COMPLETED, result.error
    assert roles(mock_llm.requests[0]) == [("user", "sales: 3"), ("user", "Analyze this data")]
    assert thread_of(result, "main") == [
        ("user", "sales: 3"),
        ("user", "Analyze this data"),
        ("assistant", "It is fine."),
    ]
    assert result.result["content"] == "It is fine."


async def test_seed_example_1_a_single_thread_node_answers_its_task_prompt(mock_llm, run_plan):
    mock_llm.script(
        [{"match": {"last_message": {"equals": "Analyze this data"}}, "reply": "Analysis."}]
    )
    example = {
        "node_type": "llm-first",
        "node_name": "Analyze",
        "thread_id": "main",
        "task_prompt": "Analyze this data",
    }
    result = await run_plan({"nodes": [example]}, "figures")

    assert result.result == {
        "content": "Analysis.",
        "threads": {
            "main": [
                {"role": "user", "content": "figures"},
                {"role": "user", "content": "Analyze this data"},
                {"role": "assistant", "content": "Analysis."},
            ]
        },
        "data_out": {},
        "tokens_usage": result.usage,
    }


async def test_seed_example_2_parallel_collection_with_aggregation(
    mock_llm, run_plan, tools_file, thread_of
):
    mock_llm.script(
        [{"match": {"last_message": "Combine all results"}, "reply": "A is 1 and B is 2."}]
    )
    example = {
        "nodes": [
            {
                "node_type": "llm-first",
                "node_name": "Create aggregator thread",
                "thread_id": "summary",
                "task_prompt": "",
                "data_out": False,
            },
            {
                "node_type": "tool-first",
                "node_name": "Fetch A",
                "thread_id": "fetch_a",
                "initial_tool_name": "get_a",
                "data_in_thread": "main",
                "data_out": True,
                "data_out_thread": "summary",
                "data_out_description": "Source A: ",
            },
            {
                "node_type": "tool-first",
                "node_name": "Fetch B",
                "thread_id": "fetch_b",
                "initial_tool_name": "get_b",
                "data_in_thread": "main",
                "data_out": True,
                "data_out_thread": "summary",
                "data_out_description": "Source B: ",
            },
            {
                "node_type": "llm-first",
                "node_name": "Summarize",
                "thread_id": "summary",
                "task_prompt": "Combine all results",
                "data_out": True,
                "data_out_thread": "main",
            },
        ]
    }
    result = await run_plan(example, "Compare the sources", tools=[tools_file()])

    assert result.status is RunStatus.COMPLETED, result.error
    assert len(mock_llm.requests) == 1  # only Summarize calls the model
    assert thread_of(result, "summary") == [
        ("user", "Compare the sources"),
        ("assistant", 'Source A: {"source": "A", "value": 1}'),
        ("assistant", "Source B: B=2"),
        ("user", "Combine all results"),
        ("assistant", "A is 1 and B is 2."),
    ]
    assert thread_of(result, "main") == [
        ("user", "Compare the sources"),
        ("assistant", "A is 1 and B is 2."),
    ]
    assert result.result["data_out"] == {
        "fetch_a": {"role": "tool", "content": 'Source A: {"source": "A", "value": 1}'},
        "fetch_b": {"role": "tool", "content": "Source B: B=2"},
        "summary": {"role": "assistant", "content": "A is 1 and B is 2."},
    }
    assert result.result["content"] == "A is 1 and B is 2."


async def test_a_new_thread_is_seeded_with_the_last_message_of_main_by_default(
    mock_llm, run_plan, step
):
    mock_llm.script([{"reply": "reply {last_message}"}])
    plan = {
        "nodes": [
            step("First", prompt="one"),
            step("Side", thread="side", prompt="two"),
        ]
    }
    await run_plan(plan, "task")

    assert roles(mock_llm.requests[1]) == [("assistant", "reply one"), ("user", "two")]


async def test_data_in_slice_minus_one_minus_one_starts_the_thread_empty(
    mock_llm, run_plan, step, thread_of
):
    mock_llm.script([{"reply": "ok"}])
    plan = {"nodes": [step("Side", thread="side", prompt="alone", data_in_slice=[-1, -1])]}
    result = await run_plan(plan, "task")

    assert roles(mock_llm.requests[0]) == [("user", "alone")]
    assert thread_of(result, "side")[0] == ("user", "alone")


async def test_data_in_slice_is_a_python_slice_of_the_source_thread(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "r-{last_message}"}])
    plan = {
        "nodes": [
            step("One", prompt="p1"),
            step("All", thread="all", prompt="q", data_in_slice=[0, None]),
            step("Two", thread="two", prompt="q", data_in_slice=[-2, None]),
            step("Head", thread="head", prompt="q", data_in_slice=[0, 1]),
        ]
    }
    await run_plan(plan, "task")

    main = [("user", "task"), ("user", "p1"), ("assistant", "r-p1")]
    assert roles(mock_llm.requests[1]) == [*main, ("user", "q")]
    assert roles(mock_llm.requests[2]) == [*main[-2:], ("user", "q")]
    assert roles(mock_llm.requests[3]) == [("user", "task"), ("user", "q")]


async def test_data_in_is_taken_from_the_thread_it_names(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "r-{last_message}"}])
    plan = {
        "nodes": [
            step("A", thread="a", prompt="pa"),
            step("B", thread="b", prompt="pb", data_in_thread="a", data_in_slice=[0, None]),
        ]
    }
    await run_plan(plan, "task")

    assert roles(mock_llm.requests[1]) == [
        ("user", "task"),
        ("user", "pa"),
        ("assistant", "r-pa"),
        ("user", "pb"),
    ]


async def test_a_node_in_an_existing_thread_ignores_data_in(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "r-{last_message}"}])
    plan = {
        "nodes": [
            step("Open", thread="side", prompt="p1", data_in_slice=[-1, -1]),
            step("Main", prompt="p2"),
            step(
                "Again", thread="side", prompt="p3", data_in_thread="main", data_in_slice=[0, None]
            ),
        ]
    }
    await run_plan(plan, "task")

    assert roles(mock_llm.requests[2]) == [
        ("user", "p1"),
        ("assistant", "r-p1"),
        ("user", "p3"),
    ]


async def test_data_out_merges_the_prefixed_content_into_its_target_thread(
    mock_llm, run_plan, step, thread_of
):
    mock_llm.script([{"reply": "42"}])
    plan = {
        "nodes": [
            step(
                "Count",
                thread="count",
                prompt="count",
                data_out=True,
                data_out_description="The count: ",
            )
        ]
    }
    result = await run_plan(plan, "task")

    assert thread_of(result, "main") == [("user", "task"), ("assistant", "The count: 42")]
    assert result.result["data_out"] == {"count": {"role": "assistant", "content": "The count: 42"}}


async def test_data_out_to_a_thread_that_does_not_exist_yet_creates_it(
    mock_llm, run_plan, step, thread_of
):
    """The original silently dropped this output."""
    mock_llm.script([{"reply": "r-{last_message}"}])
    plan = {
        "nodes": [
            step("Draft", prompt="draft", data_out=True, data_out_thread="report"),
            step("Polish", thread="report", prompt="polish", data_in_thread="main"),
        ]
    }
    result = await run_plan(plan, "task")

    assert thread_of(result, "report") == [
        ("assistant", "r-draft"),
        ("user", "polish"),
        ("assistant", "r-polish"),
    ]
    assert roles(mock_llm.requests[1]) == [("assistant", "r-draft"), ("user", "polish")]


async def test_an_empty_task_prompt_makes_no_llm_call(mock_llm, run_plan, step, thread_of):
    plan = {"nodes": [step("Open", thread="side"), step("Noop")]}
    result = await run_plan(plan, "task")

    assert result.status is RunStatus.COMPLETED, result.error
    assert mock_llm.requests == []
    assert thread_of(result, "side") == [("user", "task")]
    assert result.result["content"] == ""
    assert result.usage == {}


async def test_the_content_of_a_plan_ending_with_a_tool_only_node_is_the_tools_raw_result(
    mock_llm, run_plan, step, tools_file
):
    plan = {"nodes": [step("Fetch", thread="f", initial_tool_name="get_a")]}
    result = await run_plan(plan, "task", tools=[tools_file()])

    assert result.result["content"] == {"source": "A", "value": 1}
    assert result.outputs["Finish"]["output"] == {"content": {"source": "A", "value": 1}}
    assert mock_llm.requests == []


async def test_a_tool_first_node_puts_its_call_and_the_result_in_its_thread_before_the_prompt(
    mock_llm, run_plan, step, tools_file, thread_of
):
    mock_llm.script([{"reply": "seen {last_message}"}])
    plan = {
        "nodes": [
            step(
                "Define",
                initial_tool_name="lookup",
                initial_tool_args={"term": "graph"},
                prompt="Explain it",
            )
        ]
    }
    result = await run_plan(plan, "task", tools=[tools_file()])

    sent = mock_llm.requests[0].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[1]["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": '{"term": "graph"}',
    }
    assert sent[2]["content"] == "definition of graph"
    assert sent[2]["tool_call_id"] == sent[1]["tool_calls"][0]["id"]
    assert thread_of(result, "main")[-1] == ("assistant", "seen Explain it")


async def test_tokens_usage_sums_the_plans_llm_calls(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "one two three"}])
    plan = {"nodes": [step("A", prompt="x"), step("B", prompt="y")]}
    result = await run_plan(plan, "task")

    usage = result.result["tokens_usage"]
    assert usage["completion_tokens"] == 6
    assert usage == result.usage
    assert set(usage) == {"prompt_tokens", "completion_tokens", "total_tokens"}


async def test_the_threads_move_from_the_runs_state_into_its_result(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan({"nodes": [step("A", prompt="x")]}, "task")

    assert "plan" not in result.state
    assert set(result.result) == {"content", "threads", "data_out", "tokens_usage"}
    assert result.to_json()["result"] == result.result


async def test_a_failed_run_keeps_the_threads_in_its_state(mock_llm, run_plan, step):
    mock_llm.script([{"error": {"status": 400, "message": "bad request"}}])
    result = await run_plan({"nodes": [step("A", prompt="x")]}, "task")

    assert result.status is RunStatus.FAILED
    assert result.state["plan"]["threads"]["main"] == [
        {"role": "user", "content": "task"},
        {"role": "user", "content": "x"},
    ]
    assert result.result is None


async def test_each_plan_node_reports_its_thread_and_content(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan({"nodes": [step("A", thread="t", prompt="x")]}, "task")

    assert result.outputs["A"]["output"] == {"thread_id": "t", "content": "ok"}
