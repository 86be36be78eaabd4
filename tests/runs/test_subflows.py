"""Child runs through the RunService (SQLite and Postgres): a failed run starts its error
flow whether it failed at once, after an answer given to a held paused run, or after a
resume from its record; an error flow's own failure starts no other."""

from __future__ import annotations

import nodeloom
from nodeloom import RunStatus
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, edge, graph, node

RECORDER = chain(node("start", "chat-start"), node("keep", "json-transform", expression="$"))


def asks_then_fails(error_flow: str) -> dict:
    return {
        **graph(
            node("ok", "approval", prompt="go on?"),
            node("boom", "fail", name="Boom", message="after the answer"),
            edge("ok", "boom", "approve"),
        ),
        "error_flow": error_flow,
    }


async def test_a_run_that_fails_after_an_answer_to_its_held_pause_starts_its_error_flow(
    service: RunService, store: Store, registry
):
    await store.save_flow("Recorder", RECORDER)
    saved = await store.save_flow("Asks then fails", asks_then_fails("Recorder"))
    flow = nodeloom.load(saved.document, registry=registry)

    paused = await service.start(flow, flow_id=saved.flow_id, flow_version=1, hold=True)
    assert paused.status is RunStatus.PAUSED
    failed = await service.answer(paused.run_id, "ok", "yes")
    assert failed.status is RunStatus.FAILED

    [child] = await store.list_runs(parent_run_id=paused.run_id)
    assert child.parent_node == "$error_flow" and child.status == "completed"
    assert child.trigger["run_id"] == paused.run_id
    assert child.trigger["node"] == {"id": "boom", "name": "Boom", "type": "fail"}
    assert child.trigger["flow"] == {"id": saved.flow_id, "name": "Asks then fails"}


async def test_a_run_that_fails_after_a_resume_from_its_record_starts_its_error_flow(
    service: RunService, store: Store, registry
):
    await store.save_flow("Recorder", RECORDER)
    saved = await store.save_flow("Asks then fails", asks_then_fails("Recorder"))
    flow = nodeloom.load(saved.document, registry=registry)
    paused = await service.start(flow, flow_id=saved.flow_id, flow_version=1)

    other = RunService(store, registry)  # as another process would
    try:
        failed = await other.resume(paused.run_id, answers={"ok": "yes"})
    finally:
        await other.aclose()
    assert failed.status is RunStatus.FAILED
    [child] = await store.list_runs(parent_run_id=paused.run_id)
    assert child.trigger["error"]["message"].endswith("after the answer")


async def test_an_error_flow_that_fails_starts_no_error_flow_of_its_own(
    service: RunService, store: Store, registry
):
    failing = chain(node("start", "chat-start"), node("boom", "fail", message="again"))
    await store.save_flow("Fails too", {**failing, "error_flow": "Fails too"})
    saved = await store.save_flow("First", {**failing, "error_flow": "Fails too"})
    flow = nodeloom.load(saved.document, registry=registry)

    failed = await service.start(flow, "x", flow_id=saved.flow_id, flow_version=1)
    assert failed.status is RunStatus.FAILED
    [handler] = await store.list_runs(parent_run_id=failed.run_id)
    assert handler.status == "failed"
    assert await store.list_runs(parent_run_id=handler.id) == []


async def test_an_unknown_error_flow_leaves_the_run_failed_and_starts_nothing(
    service: RunService, store: Store, registry
):
    failing = chain(node("start", "chat-start"), node("boom", "fail", message="no"))
    saved = await store.save_flow("Orphan", {**failing, "error_flow": "Nobody"})
    flow = nodeloom.load(saved.document, registry=registry)

    failed = await service.start(flow, "x", flow_id=saved.flow_id, flow_version=1)
    assert failed.status is RunStatus.FAILED
    assert (await store.get_run(failed.run_id)).status == "failed"
    assert await store.list_runs(parent_run_id=failed.run_id) == []


async def test_a_saved_flows_input_schema_comes_from_its_trigger_node(
    service: RunService, store: Store
):
    await store.save_flow("Chat", RECORDER)
    hook = chain(
        node("in", "webhook-trigger", path="orders", secret="s"),
        node("keep", "json-transform", expression="$"),
    )
    await store.save_flow("Hook 1", hook)
    await store.save_flow("Plain", graph(node("keep", "json-transform", expression="$")))

    chat = await service.subflows.find("Chat")
    assert chat.input_schema["required"] == ["message"] and chat.tool_name == "chat"
    assert set((await service.subflows.find("Hook 1")).input_schema["properties"]) == {
        "body",
        "query",
        "headers",
    }
    assert (await service.subflows.find("Plain")).input_schema == {
        "type": "object",
        "additionalProperties": True,
    }
    assert (await service.subflows.find("Hook 1")).tool_name == "hook_1"
