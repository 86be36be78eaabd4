"""Pausing for a person: waiting nodes, paused runs, resuming them."""

import asyncio

import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.engine.events import ListSink
from nodeloom.engine.human import AnswerError
from nodeloom.errors import GraphError
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type


def approve_then(**approval):
    return graph(
        node("start", "chat-start"),
        node("check", "approval", prompt="Send {{ $json.message }}?", **approval),
        node("sent", "prompt-template", template="sent {{ $json.message }}"),
        node("dropped", "prompt-template", template="dropped: {{ $('check').item.json.note }}"),
        edge("start", "check"),
        edge("check", "sent", "approve"),
        edge("check", "dropped", "reject"),
    )


async def test_a_waiting_node_pauses_the_run_and_says_what_it_needs(run):
    flow = run.load(approve_then())
    sink = nodeloom.ListSink()
    result = await flow.run("mail", sink=sink)
    assert result.status is RunStatus.PAUSED
    assert result.waiting == [
        {
            "node_id": "check",
            "node_name": "check",
            "node_type": "approval",
            "kind": "approval",
            "prompt": "Send mail?",
            "value": {"message": "mail"},
        }
    ]
    assert result.to_json()["waiting"] == [
        {"node_id": "check", "node_name": "check", "kind": "approval"}
    ]
    [waiting] = of_type(sink.events, "waiting", "check")
    assert waiting.data["kind"] == "approval"
    assert of_type(sink.events, "run_paused")
    await flow.aclose()


async def test_resuming_an_approval_follows_the_approve_branch_with_its_input(run):
    flow = run.load(approve_then())
    paused = await flow.run("mail")
    result = await flow.resume(paused.run_id, "check", "yes")
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["check"] == {
        "decision": {"decision": "approve", "note": ""},
        "approve": {"message": "mail"},
    }
    assert result.outputs["sent"]["output"]["text"] == "sent mail"
    assert "dropped" not in result.outputs


async def test_a_rejection_with_a_note_follows_the_reject_branch(run):
    flow = run.load(approve_then())
    paused = await flow.run("mail")
    result = await flow.resume(paused.run_id, "check", {"decision": "reject", "note": "not today"})
    assert result.outputs["dropped"]["output"]["text"] == "dropped: not today"


@pytest.mark.parametrize("answer", ["maybe", "", {"decision": "sure"}, 1, None])
async def test_an_answer_that_is_not_a_decision_is_refused_and_the_node_keeps_waiting(run, answer):
    flow = run.load(approve_then())
    paused = await flow.run("mail")
    with pytest.raises(AnswerError, match="is not an approval decision"):
        await flow.resume(paused.run_id, "check", answer)
    assert flow.paused() == [paused.run_id]
    result = await flow.resume(paused.run_id, "check", "n")
    assert result.outputs["check"]["decision"]["decision"] == "reject"


async def test_no_is_a_rejection_never_an_approval(run):
    flow = run.load(approve_then())
    paused = await flow.run("mail")
    result = await flow.resume(paused.run_id, "check", "no")
    assert "reject" in result.outputs["check"] and "approve" not in result.outputs["check"]


def two_approvals():
    return graph(
        node("start", "chat-start"),
        node("a", "approval", name="First"),
        node("b", "approval", name="Second"),
        node("join", "merge"),
        edge("start", "a"),
        edge("start", "b"),
        edge("a", "join", "approve"),
        edge("b", "join", "approve"),
    )


@pytest.mark.parametrize("order", [("First", "Second"), ("Second", "First")])
async def test_two_nodes_wait_at_once_and_are_resumed_by_id_in_either_order(run, order):
    flow = run.load(two_approvals())
    paused = await flow.run("x")
    assert {w["node_name"] for w in paused.waiting} == {"First", "Second"}
    middle = await flow.resume(paused.run_id, order[0], "approve")
    assert middle.status is RunStatus.PAUSED
    assert [w["node_name"] for w in middle.waiting] == [order[1]]
    done = await flow.resume(paused.run_id, order[1], "approve")
    assert done.status is RunStatus.COMPLETED
    assert done.outputs["join"]["output"] == [{"message": "x"}, {"message": "x"}]


async def test_a_sibling_branch_runs_to_its_end_while_another_waits(run):
    doc = graph(
        node("start", "chat-start"),
        node("wait", "approval"),
        node("busy", "sleep", seconds=0.1, value="work done"),
        node("after_busy", "const", value="{{ $json }} and more"),
        edge("start", "wait"),
        edge("start", "busy"),
        edge("busy", "after_busy"),
    )
    flow = run.load(doc)
    sink = nodeloom.ListSink()
    paused = await flow.run("x", sink=sink)
    assert paused.status is RunStatus.PAUSED
    assert paused.outputs["after_busy"]["output"] == "work done and more"
    paused_at = of_type(sink.events, "run_paused")[0].seq
    assert of_type(sink.events, "completed", "after_busy")[0].seq < paused_at
    await flow.aclose()


async def test_an_approval_inside_a_loop_waits_once_per_iteration(run):
    body = {"nodes": [node("ok", "approval", prompt="Item {{ $loop.item }}?")], "edges": []}
    doc = graph(node("each", "loop", items=[1, 2], body=body, output_node="ok"))
    flow = run.load(doc)
    first = await flow.run()
    assert [w["node_id"] for w in first.waiting] == ["each/ok"]
    assert first.waiting[0]["prompt"] == "Item 1?"
    second = await flow.resume(first.run_id, "each/ok", "approve")
    assert second.waiting[0]["prompt"] == "Item 2?"
    done = await flow.resume(first.run_id, "each/ok", {"decision": "reject", "note": "no"})
    assert done.outputs["each"]["output"] == [
        {"decision": "approve", "note": ""},
        {"decision": "reject", "note": "no"},
    ]


async def test_answers_given_ahead_of_time_are_used_in_turn(run):
    body = {"nodes": [node("ok", "approval")], "edges": []}
    doc = graph(node("each", "loop", items=[1, 2], body=body, output_node="ok"))
    result = await run.load(doc).run(answers={"ok": ["yes", "no"]})
    assert result.status is RunStatus.COMPLETED
    assert [d["decision"] for d in result.outputs["each"]["output"]] == ["approve", "reject"]


async def test_an_answer_given_ahead_of_time_that_does_not_fit_is_refused_before_the_run(run):
    sink = ListSink()
    with pytest.raises(GraphError) as raised:
        await run.load(approve_then()).run("m", answers={"check": "perhaps"}, sink=sink)
    [issue] = raised.value.issues
    assert issue.code == "invalid_answer" and issue.node_id == "check"
    assert "approve (or approved, yes, y, ok)" in issue.message
    assert sink.events == []


async def test_an_answer_to_a_node_whose_question_is_an_expression_is_checked_when_it_waits(run):
    doc = graph(node("f", "human-input", fields="{{ [] }}"))
    result = await run.load(doc).run(answers={"f": {"age": 1}})
    assert result.status is RunStatus.FAILED and result.error["code"] == "invalid_answer"


async def test_human_input_takes_free_text_or_a_form(run):
    doc = graph(
        node("q", "human-input", prompt="Name?"),
        node(
            "f",
            "human-input",
            fields=[{"name": "age", "type": "number"}, {"name": "nick", "required": False}],
        ),
    )
    flow = run.load(doc)
    paused = await flow.run()
    await flow.resume(paused.run_id, "q", "Ada")
    with pytest.raises(AnswerError, match="field 'age' must be a number"):
        await flow.resume(paused.run_id, "f", {"age": "old"})
    done = await flow.resume(paused.run_id, "f", {"age": 36})
    assert done.outputs == {"q": {"output": {"text": "Ada"}}, "f": {"output": {"age": 36}}}


async def test_resuming_a_node_that_does_not_wait_is_refused(run):
    flow = run.load(two_approvals())
    paused = await flow.run()
    with pytest.raises(AnswerError, match="node 'join' is not waiting"):
        await flow.resume(paused.run_id, "join", "yes")
    with pytest.raises(AnswerError, match="is not paused"):
        await flow.resume("no-such-run", "First", "yes")
    await flow.aclose()


async def test_a_waiting_node_does_not_hold_a_concurrency_slot(run):
    doc = graph(
        node("start", "chat-start"),
        node("wait", "approval"),
        node("other", "const", value=1),
        edge("start", "wait"),
        edge("start", "other"),
    )
    flow = run.load(doc)
    paused = await flow.run(settings=nodeloom.RunSettings(max_concurrency=1))
    assert paused.status is RunStatus.PAUSED and "other" in paused.outputs
    await flow.aclose()


async def test_cancelling_a_paused_run_emits_run_cancelled(run):
    flow = run.load(approve_then())
    sink = nodeloom.ListSink()
    paused = await flow.run("x", sink=sink)
    await flow.cancel(paused.run_id)
    assert flow.paused() == [] and of_type(sink.events, "run_cancelled")


async def test_closing_the_flow_releases_its_paused_runs_without_cancelling_them(run):
    flow = run.load(approve_then())
    sink = nodeloom.ListSink()
    await flow.run("x", sink=sink)
    await flow.aclose()
    assert flow.paused() == []
    assert sink.events[-1].event_type == "run_paused"
    await asyncio.sleep(0)


async def test_streaming_a_run_that_pauses_ends_with_run_paused(run):
    flow = run.load(approve_then())
    seen = [event async for event in flow.stream("x")]
    assert seen[-1].event_type == "run_paused"
    assert [w["node_id"] for w in seen[-1].data["waiting"]] == ["check"]
    await flow.aclose()


async def test_a_target_run_keeps_answers_to_nodes_outside_its_subset_unused(run):
    flow = run.load(approve_then())
    result = await flow.run("m", target="start", answers={"check": "yes"})
    assert result.status is RunStatus.COMPLETED
    with pytest.raises(GraphError, match="not a node of the graph"):
        await flow.run("m", target="start", answers={"chek": "yes"})


async def test_a_waiting_node_announces_itself_once_and_not_for_an_answer_given_ahead(run):
    doc = graph(node("a", "announce"), node("b", "announce"))
    flow = run.load(doc)
    paused = await flow.run(answers={"b": "given"})
    assert paused.status is RunStatus.PAUSED
    done = await flow.resume(paused.run_id, "a", "later")
    assert done.outputs == {"a": {"output": "later"}, "b": {"output": "given"}}
    assert done.state["announced"] == ["a"]
