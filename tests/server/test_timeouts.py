"""A person's deadline through a real server: an Approval or Human Input with
`timeout: 1` pauses the run (recorded with its wake time, not held in memory), and the
server's timer service wakes it when the second has passed; the node then takes its
`on_timeout` path: fail, answer, or the `timeout` port."""

from __future__ import annotations

from typing import Any

import httpx

from nodeloom.testing.builders import edge, graph, node

from .test_runs import save, wait_for


def approval(on_timeout: str, **extra: Any) -> dict[str, Any]:
    return graph(
        node("start", "chat-start"),
        node("ok", "approval", name="Ok", timeout=1, on_timeout=on_timeout, **extra),
        node("yes", "json-transform", name="Yes", expression='"approved"'),
        node("no", "json-transform", name="No", expression='"rejected"'),
        node("late", "json-transform", name="Late", expression='"nobody answered"'),
        edge("start", "ok"),
        edge("ok", "yes", "approve"),
        edge("ok", "no", "reject"),
        *([edge("ok", "late", "timeout")] if on_timeout == "port" else []),
    )


def started(api: httpx.Client, document: dict[str, Any]) -> str:
    response = api.post(f"/api/flows/{save(api, document)}/runs", json={"message": "hi"})
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])


def ran(api: httpx.Client, run_id: str) -> set[str]:
    timeline = api.get(f"/api/runs/{run_id}").json()["timeline"]
    return {row["node_id"] for row in timeline if row["status"] == "completed"}


def test_an_approval_that_times_out_with_on_timeout_fail_fails_the_run_naming_the_node(
    api: httpx.Client,
):
    run_id = started(api, approval("fail"))
    wait_for(api, run_id, "paused")
    run = wait_for(api, run_id, "failed", within=10)
    assert run["error"]["code"] == "input_timeout"
    assert "'Ok'" in run["error"]["message"] and "on_timeout" in run["error"]["message"]


def test_an_approval_that_times_out_with_on_timeout_answer_takes_the_default_answer(
    api: httpx.Client,
):
    run_id = started(api, approval("answer", timeout_answer="approve"))
    wait_for(api, run_id, "paused")
    wait_for(api, run_id, "completed", within=10)
    assert {"ok", "yes"} <= ran(api, run_id) and "no" not in ran(api, run_id)


def test_an_approval_that_times_out_with_on_timeout_port_goes_out_on_its_timeout_port(
    api: httpx.Client,
):
    run_id = started(api, approval("port"))
    wait_for(api, run_id, "paused")
    wait_for(api, run_id, "completed", within=10)
    assert {"ok", "late"} <= ran(api, run_id)
    assert not {"yes", "no"} & ran(api, run_id)


def test_an_edge_from_the_timeout_port_is_invalid_unless_on_timeout_is_port(
    api: httpx.Client,
):
    document = approval("fail")
    document["edges"].append(edge("ok", "late", "timeout"))
    result = api.post("/api/validate", json={"document": document}).json()
    assert not result["valid"]
    assert any(i["node_id"] == "ok" or "timeout" in i["message"] for i in result["issues"])
    document["nodes"][1]["data"]["on_timeout"] = "port"
    assert api.post("/api/validate", json={"document": document}).json()["valid"]


def test_a_human_input_answered_in_time_does_not_time_out(api: httpx.Client):
    document = graph(
        node("start", "chat-start"),
        node("q", "human-input", name="Q", timeout=1, on_timeout="fail"),
        edge("start", "q"),
    )
    run_id = started(api, document)
    wait_for(api, run_id, "paused")
    answered = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"Q": "here"}})
    assert answered.status_code == 202, answered.text
    run = wait_for(api, run_id, "completed", within=10)
    assert run["status"] == "completed"


def test_a_human_input_that_times_out_with_on_timeout_answer_outputs_the_default(
    api: httpx.Client,
):
    document = graph(
        node("start", "chat-start"),
        node("q", "human-input", name="Q", timeout=1, on_timeout="answer", timeout_answer="n/a"),
        edge("start", "q"),
    )
    run_id = started(api, document)
    wait_for(api, run_id, "completed", within=10)
    timeline = api.get(f"/api/runs/{run_id}").json()["timeline"]
    (q,) = [row for row in timeline if row["node_id"] == "q" and row["status"] == "completed"]
    assert q["outputs"]["output"] == {"text": "n/a"}
