"""Workflows run on the native engine against the mock LLM (real HTTP): the seed's examples,
every field and rule, and the original's defects not reproduced."""

import time

import pytest

import nodeloom
from nodeloom import RunSettings, RunStatus
from nodeloom.formats.workflow import logs
from nodeloom.testing.events import of_type


async def run(flow, message=None, **options):
    sink = nodeloom.ListSink()
    result = await flow.run(message, sink=sink, **options)
    return result, sink.events


def texts(requests):
    return [r.last_message for r in requests]


# -- the seed's examples -----------------------------------------------------------------


async def test_start_output_feeds_agent_input(wf, load, mock_llm):
    mock_llm.script([{"match": {"last_message": {"equals": "hello"}}, "reply": "  hi there \n"}])
    flow = load(wf.doc(wf.start(initialInput="hello"), wf.agent("a"), wf.link("start", "a")))
    result, _ = await run(flow)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["a"]["output"] == "hi there", "the reply text, trimmed"
    [request] = mock_llm.requests
    assert request.messages[0]["content"] == "You are a helpful assistant."
    assert request.messages[0]["role"] in ("system", "developer")
    assert request.model == "gpt-5"


async def test_if_condition_0_feeds_agent_input(wf, load, mock_llm):
    flow = load(
        wf.doc(
            wf.start(initialInput="please REFUND me"),
            wf.if_node("check", ("contains", "refund")),
            wf.agent("refunds", systemPrompt="Refunds."),
            wf.agent("other", systemPrompt="Other."),
            wf.link("start", "check"),
            wf.link("check", "refunds", "condition-0"),
            wf.link("check", "other", "false"),
        )
    )
    result, _ = await run(flow)
    assert "refunds" in result.outputs and "other" not in result.outputs
    assert texts(mock_llm.requests) == ["please REFUND me"], "the if passes its input on"


async def test_approval_approve_feeds_agent_input(wf, load, mock_llm):
    flow = load(
        wf.doc(
            wf.start(initialInput="draft"),
            wf.approval("ok"),
            wf.agent("send", userPrompt="Send: {{PREVIOUS_OUTPUT}}"),
            wf.link("start", "ok"),
            wf.link("ok", "send", "approve"),
        )
    )
    paused, _ = await run(flow)
    assert paused.status is RunStatus.PAUSED
    assert [w["node_id"] for w in paused.waiting] == ["ok"] and mock_llm.requests == []
    done = await flow.resume(paused.run_id, "ok", "yes")
    assert done.status is RunStatus.COMPLETED
    assert texts(mock_llm.requests) == ["Send: draft"], "the pre-approval output is passed on"


# -- start ---------------------------------------------------------------------------------


async def test_the_runs_message_wins_over_the_initial_input(wf, load, mock_llm):
    document = wf.doc(wf.start(initialInput="from the file"), wf.agent("a"), wf.link("start", "a"))
    flow = load(document)
    await run(flow, "from the run")
    await run(flow)
    assert texts(mock_llm.requests) == ["from the run", "from the file"]


# -- agent ---------------------------------------------------------------------------------


async def test_previous_output_is_the_previous_agents_reply_text(wf, load, mock_llm):
    mock_llm.script(
        [
            {"match": {"system": "Writer"}, "reply": "a {{{{braced}}}} draft"},  # literal {{
            {"reply": "reviewed"},
        ]
    )
    flow = load(
        wf.doc(
            wf.start(initialInput="topic"),
            wf.agent("w", systemPrompt="Writer {{keep}}"),
            wf.agent("r", userPrompt="Review {{PREVIOUS_OUTPUT}} and {{PREVIOUS_OUTPUT}} {{x}}"),
            wf.link("start", "w"),
            wf.link("w", "r"),
        )
    )
    result, _ = await run(flow)
    assert result.outputs["r"]["output"] == "reviewed"
    first, second = mock_llm.requests
    assert first.messages[0]["content"] == "Writer {{keep}}", "system prompts are literal"
    assert second.last_message == "Review a {{braced}} draft and a {{braced}} draft {{x}}"


async def test_an_empty_user_prompt_falls_back_to_the_previous_output(wf, load, mock_llm):
    blank = wf.agent("a", userPrompt="   ")
    flow = load(wf.doc(wf.start(initialInput="as is"), blank, wf.link("start", "a")))
    await run(flow)
    assert texts(mock_llm.requests) == ["as is"]


async def test_an_empty_prompt_fails_the_node_without_calling_the_model(wf, load, mock_llm):
    flow = load(wf.doc(wf.start(), wf.agent("a"), wf.link("start", "a")))
    result, _ = await run(flow)
    assert result.status is RunStatus.FAILED and result.error["code"] == "empty_prompt"
    assert mock_llm.requests == []


async def test_the_model_and_reasoning_effort_are_sent(wf, load, mock_llm):
    flow = load(
        wf.doc(
            wf.start(initialInput="x"),
            wf.agent("a", model="gpt-5-mini", reasoningEffort="high"),
            wf.agent("b", model="openai:gpt-4o-mini"),
            wf.link("start", "a"),
            wf.link("a", "b"),
        )
    )
    await run(flow)
    first, second = mock_llm.requests
    assert (first.model, first.body.get("reasoning_effort")) == ("gpt-5-mini", "high")
    assert (second.model, second.body.get("reasoning_effort")) == ("gpt-4o-mini", None)


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-5", "ollama:llama3.2"])
async def test_reasoning_effort_is_ignored_by_other_providers(wf, load, monkeypatch, model):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    flow = load(
        wf.doc(
            wf.start(), wf.agent("a", model=model, reasoningEffort="high"), wf.link("start", "a")
        )
    )
    built = await flow.build()
    assert built.results["a"].summary["reasoning_effort"] is None
    assert getattr(built.results["a"].agent.model, "reasoning_effort", None) is None


async def test_web_search_is_the_ssrf_guarded_http_fetch_tool(wf, load, mock_llm):
    mock_llm.script(
        [
            {
                "match": {"tools": ["http_fetch"], "tool_result": False},
                "tool_calls": [{"name": "http_fetch", "arguments": {"url": "http://127.0.0.1:9/"}}],
            },
            {"match": {"tool_result": "http_fetch"}, "reply": "fetched: {tool_result}"},
        ]
    )
    flow = load(
        wf.doc(
            wf.start(initialInput="look it up"),
            wf.agent("a", tools={"web_search": True}),
            wf.link("start", "a"),
        )
    )
    result, events = await run(flow)
    assert mock_llm.requests[0].tools == ["http_fetch"]
    reply = result.outputs["a"]["output"]
    assert reply.startswith("fetched: ") and "127.0.0.1" in reply, reply
    assert "private" in reply.lower() or "loopback" in reply.lower(), "refused by the guard"
    assert [e.data["tool"] for e in of_type(events, "agent_event", "a")] == ["http_fetch"] * 2


async def test_without_web_search_the_agent_has_no_tools(wf, load, mock_llm):
    flow = load(wf.doc(wf.start(initialInput="x"), wf.agent("a"), wf.link("start", "a")))
    await run(flow)
    assert mock_llm.requests[0].tools == []


async def test_tokens_stream_and_usage_is_reported(wf, load, mock_llm):
    mock_llm.script([{"reply": "one two three"}])
    flow = load(wf.doc(wf.start(initialInput="count"), wf.agent("a"), wf.link("start", "a")))
    result, events = await run(flow)
    tokens = [e.data["token"] for e in of_type(events, "progress", "a") if "token" in e.data]
    assert "".join(tokens) == "one two three"
    [completed] = of_type(events, "completed", "a")
    assert completed.data["usage"]["completion_tokens"] == 3
    assert result.usage == completed.data["usage"]


async def test_a_model_error_fails_the_run_with_llm_error(wf, load, mock_llm):
    mock_llm.script([{"error": {"status": 400, "message": "model says no"}}])
    flow = load(wf.doc(wf.start(initialInput="x"), wf.agent("a"), wf.link("start", "a")))
    result, events = await run(flow)
    assert result.status is RunStatus.FAILED and result.error["code"] == "agent_error"
    assert "model says no" in result.error["message"]
    entries = [(e["type"], e["content"]) for e in logs(events) if e["nodeId"] == "a"]
    assert entries[-1] == ("llm_error", "model says no")


async def test_an_unconfigured_model_fails_before_any_call(wf, load, mock_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    flow = load(
        wf.doc(
            wf.start(initialInput="x"),
            wf.agent("a", model="anthropic:claude-sonnet-4-5"),
            wf.agent("b"),
            wf.link("start", "a"),
            wf.link("a", "b"),
        )
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    result, events = await run(flow)
    assert result.error["code"] == "model_not_configured" and result.error["node_id"] == "b"
    assert not of_type(events, "started"), "phase 1 checks every agent before the flow"


# -- subagents -----------------------------------------------------------------------------


def three_levels(wf, **grandchild):
    return wf.doc(
        wf.start(initialInput="plan a trip"),
        wf.agent("lead", agentName="Lead", systemPrompt="Lead.", tools={"subagents": True}),
        wf.agent("child", agentName="Child", systemPrompt="Child.", tools={"subagents": True}),
        wf.agent("grand", agentName="Grand Kid", systemPrompt="Grand.", **grandchild),
        wf.link("start", "lead"),
        wf.subagent("lead", "child"),
        wf.subagent("child", "grand"),
    )


NESTED = [
    {
        "match": {"system": "Lead.", "tool_result": False},
        "tool_calls": [{"name": "subagent_child_child", "arguments": {"input": "find a hotel"}}],
    },
    {
        "match": {"system": "Child.", "tool_result": False},
        "tool_calls": [{"name": "subagent_grand_kid_grand", "arguments": {"input": "any hotel"}}],
    },
    {"match": {"system": "Grand."}, "reply": " ".join(["word"] * 60)},
    {"match": {"system": "Child."}, "reply": "Hotel Lima"},
    {"match": {"system": "Lead."}, "reply": "Booked: {tool_result}"},
]


async def test_subagents_are_nested_agent_tools_and_each_call_is_logged(wf, load, mock_llm):
    mock_llm.script(NESTED)
    flow = load(three_levels(wf))
    result, events = await run(flow)
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.outputs["Lead"]["output"] == "Booked: Hotel Lima"
    assert "Child" not in result.outputs, "a subagent is not a flow node"
    offered = {r.messages[0]["content"]: r.tools for r in mock_llm.requests}
    assert offered["Lead."] == ["subagent_child_child"]
    assert offered["Child."] == ["subagent_grand_kid_grand"]
    calls = [e.data for e in of_type(events, "progress", "lead") if "call_id" in e.data]
    assert [(c["log"], c["subagent_node_id"], c["depth"]) for c in calls] == [
        ("subagent_call_start", "child", 1),
        ("subagent_call_start", "grand", 2),
        ("subagent_call_end", "grand", 2),
        ("subagent_call_end", "child", 1),
    ]
    assert calls[1]["parent_call_id"] == calls[0]["call_id"]


async def test_tokens_spent_by_subagents_count_in_the_parents_usage(wf, load, mock_llm):
    mock_llm.script(NESTED)
    result, events = await run(load(three_levels(wf)))
    [completed] = of_type(events, "completed", "lead")
    assert completed.data["usage"]["completion_tokens"] >= 60, "the grandchild's 60 words"
    assert result.usage == completed.data["usage"]


async def test_a_failing_subagent_is_logged_and_its_parent_reads_the_failure(wf, load, mock_llm):
    mock_llm.script(
        [
            {"match": {"system": "Grand."}, "error": {"status": 400, "message": "grand broke"}},
            *[rule for rule in NESTED if rule.get("match", {}).get("system") != "Grand."],
        ]
    )
    result, events = await run(load(three_levels(wf)))
    assert result.status is RunStatus.COMPLETED
    errors = [e for e in logs(events) if e["type"] == "subagent_call_error"]
    assert len(errors) == 1 and '"subagentNodeId": "grand"' in errors[0]["content"]
    assert "grand broke" in errors[0]["content"]
    child_second = [r for r in mock_llm.requests if r.messages[0]["content"] == "Child."][-1]
    assert "The subagent Grand Kid failed: grand broke" in child_second.last_message


# -- if ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "conditions, text, fired",
    [
        ([("equal", "yes")], "YES", "condition-0"),
        ([("equal", "  Yes ")], "yes", "condition-0"),
        ([("equal", "yes")], "yes please", "false"),
        ([("contains", "PLEASE")], "yes please", "condition-0"),
        ([("contains", "")], "anything", "false"),
        ([("equal", "")], "", "false"),
        ([("contains", "a"), ("contains", "b")], "ab", "condition-0"),
        ([("contains", "x"), ("contains", "b")], "ab", "condition-1"),
    ],
)
async def test_the_first_condition_that_holds_picks_the_branch(wf, load, conditions, text, fired):
    flow = load(wf.doc(wf.start(), wf.if_node("check", *conditions), wf.link("start", "check")))
    result, events = await run(flow, text)
    assert list(result.outputs["check"]) == [fired]
    assert result.outputs["check"][fired] == text
    checks = [e["content"] for e in logs(events) if e["type"] == "logic_check"]
    evaluated = int(fired.split("-")[1]) + 1 if fired != "false" else len(conditions)
    assert len(checks) == evaluated


# -- approval ------------------------------------------------------------------------------


def approve_or_reject(wf):
    return wf.doc(
        wf.start(initialInput="draft"),
        wf.approval("ok"),
        wf.agent("send", systemPrompt="Send."),
        wf.agent("redo", systemPrompt="Redo."),
        wf.link("start", "ok"),
        wf.link("ok", "send", "approve"),
        wf.link("ok", "redo", "reject"),
    )


@pytest.mark.parametrize("answer", ["no", "No", "n", "reject", {"decision": "reject"}])
async def test_no_is_a_rejection(wf, load, mock_llm, answer):
    flow = load(approve_or_reject(wf))
    paused, _ = await run(flow)
    done = await flow.resume(paused.run_id, "ok", answer)
    assert "redo" in done.outputs and "send" not in done.outputs
    assert done.outputs["ok"]["decision"]["decision"] == "reject"


async def test_a_rejection_note_is_kept_and_an_unclear_answer_is_refused(wf, load, mock_llm):
    from nodeloom.engine.human import AnswerError

    flow = load(approve_or_reject(wf))
    paused, _ = await run(flow)
    with pytest.raises(AnswerError):
        await flow.resume(paused.run_id, "ok", "nope, not like this")
    done = await flow.resume(paused.run_id, "ok", {"decision": "reject", "note": "too long"})
    assert done.outputs["ok"]["decision"] == {"decision": "reject", "note": "too long"}
    assert done.outputs["redo"]["output"]


async def test_answers_given_ahead_of_time_resume_at_once(wf, load, mock_llm):
    flow = load(approve_or_reject(wf))
    result, _ = await run(flow, answers={"ok": "approve"})
    assert result.status is RunStatus.COMPLETED and "send" in result.outputs


# -- concurrency, queues, limits -----------------------------------------------------------


async def test_branches_of_a_fan_out_run_concurrently(wf, load, mock_llm):
    mock_llm.script([{"reply": "done", "delay": 0.4}])
    flow = load(
        wf.doc(
            wf.start(initialInput="go"),
            wf.agent("a"),
            wf.agent("b"),
            wf.agent("c"),
            wf.link("start", "a"),
            wf.link("start", "b"),
            wf.link("start", "c"),
        )
    )
    await flow.build()  # compile first, so only the model calls are timed
    began = time.perf_counter()
    result, _ = await run(flow)
    elapsed = time.perf_counter() - began
    assert {"a", "b", "c"} <= set(result.outputs)
    assert elapsed < 1.0, f"three 0.4 s calls took {elapsed:.2f} s: not concurrent"


async def test_a_sibling_keeps_running_while_the_first_branch_waits_for_approval(
    wf, load, mock_llm
):
    flow = load(
        wf.doc(
            wf.start(initialInput="go"),
            wf.approval("ok"),
            wf.agent("sibling", systemPrompt="Sibling."),
            wf.agent("after", systemPrompt="After."),
            wf.link("start", "ok"),  # the first branch of the fan-out
            wf.link("start", "sibling"),
            wf.link("ok", "after", "approve"),
        )
    )
    paused, _ = await run(flow)
    assert paused.status is RunStatus.PAUSED
    assert paused.outputs["sibling"]["output"] == "mock reply to: go", "the sibling was not dropped"
    assert "after" not in paused.outputs
    done = await flow.resume(paused.run_id, "ok", "yes")
    assert done.outputs["after"]["output"] == "mock reply to: go"


async def test_a_node_runs_once_per_arriving_value(wf, load, mock_llm):
    flow = load(
        wf.doc(
            wf.start(initialInput="go"),
            wf.agent("a", userPrompt="A"),
            wf.agent("b", userPrompt="B"),
            wf.agent("join", userPrompt="got {{PREVIOUS_OUTPUT}}"),
            wf.link("start", "a"),
            wf.link("start", "b"),
            wf.link("a", "join"),
            wf.link("b", "join"),
        )
    )
    _, events = await run(flow)
    assert len(of_type(events, "completed", "join")) == 2
    assert sorted(t for t in texts(mock_llm.requests) if t.startswith("got")) == [
        "got mock reply to: A",
        "got mock reply to: B",
    ]


async def test_an_agent_cycle_stops_at_the_step_limit(wf, load, mock_llm):
    flow = load(
        wf.doc(
            wf.start(initialInput="again"),
            wf.agent("a"),
            wf.agent("b"),
            wf.link("start", "a"),
            wf.link("a", "b"),
            wf.link("b", "a"),
        )
    )
    assert flow.default_settings().max_steps == 1000, "the converted graph's own limit"
    result, _ = await run(flow, settings=RunSettings(max_steps=15))
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "max_steps_exceeded"
    assert len(mock_llm.requests) == 14, "every step but the start called the model once"


async def test_a_cycle_through_an_if_ends_when_its_condition_changes(wf, load, mock_llm):
    mock_llm.script([{"reply": "draft", "times": 2}, {"reply": "FINAL text"}])
    flow = load(
        wf.doc(
            wf.start(initialInput="write"),
            wf.agent("w", userPrompt="Improve: {{PREVIOUS_OUTPUT}}"),
            wf.if_node("done", ("contains", "final")),
            wf.approval("ok"),
            wf.link("start", "w"),
            wf.link("w", "done"),
            wf.link("done", "w", "false"),
            wf.link("done", "ok", "condition-0"),
        )
    )
    result, _ = await run(flow, answers={"ok": "yes"})
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["ok"]["approve"] == "FINAL text"
    assert texts(mock_llm.requests) == ["Improve: write", "Improve: draft", "Improve: draft"]
