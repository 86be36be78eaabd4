"""Sub-flows and error flows through a real `nodeloom serve`: an Execute Flow node runs a
saved flow as a child run linked both ways; a failed child reaches the parent's error
port; nesting is bounded; a failed run starts its flow's error flow."""

from __future__ import annotations

import time
from typing import Any

import httpx

from nodeloom.testing.builders import chain, edge, graph, node

from .flows import shout
from .test_runs import save, wait_for


def run(api: httpx.Client, flow_id: str, message: str = "hi") -> str:
    started = api.post(f"/api/flows/{flow_id}/runs", json={"message": message})
    assert started.status_code == 202, started.text
    return str(started.json()["run_id"])


def calling(flow: str, **data: Any) -> dict[str, Any]:
    """chat-start -> execute-flow(flow) -> json-transform (reads the child's output)."""
    return chain(
        node("start", "chat-start"),
        node("call", "execute-flow", name="Call", flow=flow, **data),
        node("after", "json-transform", name="After", expression='{"got": text}'),
    )


def test_a_parent_flow_runs_a_child_flow_and_gets_its_result(api: httpx.Client):
    child_id = save(api, shout(), name="Shout child")
    parent_id = save(api, calling("Shout child"), name="Parent")

    parent = wait_for(api, run(api, parent_id, "hello"), "completed", "failed")
    assert parent["status"] == "completed", parent["error"]
    after = next(row for row in parent["timeline"] if row["node_id"] == "after")
    assert after["outputs"] == {"output": {"got": "HELLO"}}

    [link] = parent["children"]
    assert link["flow_id"] == child_id and link["parent_node"] == "call"
    child = api.get(f"/api/runs/{link['id']}").json()
    assert child["status"] == "completed"
    assert child["parent_run_id"] == parent["id"] and child["parent_node"] == "call"
    assert child["trigger"] == {"message": "hello"}
    listed = api.get("/api/runs", params={"parent_run_id": parent["id"]}).json()["runs"]
    assert [r["id"] for r in listed] == [link["id"]]


def test_the_input_parameter_is_the_childs_trigger_and_a_version_can_be_pinned(
    api: httpx.Client,
):
    child_id = save(api, shout(), name="Pinned child")
    renamed = chain(
        node("start", "chat-start"),
        node("shout", "json-transform", expression='{"text": "v2"}'),
    )
    assert api.put(f"/api/flows/{child_id}", json={"name": "Pinned child", "document": renamed})
    parent_id = save(
        api, calling(child_id, version=1, input={"message": "{{ $json.message }}!"}), name="P2"
    )

    parent = wait_for(api, run(api, parent_id, "pin"), "completed", "failed")
    assert parent["status"] == "completed", parent["error"]
    child = api.get(f"/api/runs/{parent['children'][0]['id']}").json()
    assert child["flow_version"] == 1 and child["trigger"] == {"message": "pin!"}
    after = next(row for row in parent["timeline"] if row["node_id"] == "after")
    assert after["outputs"] == {"output": {"got": "PIN!"}}


def test_a_failed_child_reaches_the_parents_error_port(api: httpx.Client):
    save(api, chain(node("start", "chat-start"), node("boom", "fail", message="no")), "Breaks")
    parent_id = save(
        api,
        graph(
            node("start", "chat-start"),
            node("call", "execute-flow", flow="Breaks", on_error="error_output"),
            node("handled", "json-transform", expression='{"caught": code}'),
            edge("start", "call"),
            edge("call", "handled", source_handle="error"),
        ),
        name="Catches",
    )

    parent = wait_for(api, run(api, parent_id), "completed", "failed")
    assert parent["status"] == "completed", parent["error"]
    handled = next(row for row in parent["timeline"] if row["node_id"] == "handled")
    assert handled["outputs"] == {"output": {"caught": "subflow_failed"}}
    child = api.get(f"/api/runs/{parent['children'][0]['id']}").json()
    assert child["status"] == "failed" and child["parent_run_id"] == parent["id"]


def test_a_flow_that_calls_itself_stops_at_max_depth_with_the_chain_named(api: httpx.Client):
    flow_id = save(api, chain(node("start", "chat-start")), name="Loops")
    again = calling("Loops", max_depth=2)
    assert api.put(f"/api/flows/{flow_id}", json={"name": "Loops", "document": again})

    root = wait_for(api, run(api, flow_id), "completed", "failed", within=30)
    assert root["status"] == "failed"
    depth = 0
    current = root
    while current["children"]:
        current = api.get(f"/api/runs/{current['children'][0]['id']}").json()
        depth += 1
    assert depth == 2
    error = current["error"]
    assert error["code"] == "subflow_depth"
    assert "Loops -> Loops -> Loops -> Loops" in error["message"]


def test_an_unknown_flow_is_named_with_the_saved_flows_listed(api: httpx.Client):
    save(api, shout(), name="Known one")
    parent_id = save(api, calling("Nope"), name="Asks for nothing")

    parent = wait_for(api, run(api, parent_id), "completed", "failed")
    assert parent["error"]["code"] == "unknown_flow"
    assert "'Nope'" in parent["error"]["message"]
    assert "'Known one'" in parent["error"]["message"]


def test_a_failed_run_starts_its_error_flow_with_what_failed(api: httpx.Client):
    save(
        api,
        chain(node("start", "chat-start"), node("log", "json-transform", expression="$")),
        "On failure",
    )
    failing = chain(node("start", "chat-start"), node("boom", "fail", name="Boom", message="bad"))
    flow_id = save(api, {**failing, "error_flow": "On failure"}, name="Fragile")

    run_id = run(api, flow_id)
    wait_for(api, run_id, "failed")
    deadline = time.monotonic() + 20
    while not (failed := api.get(f"/api/runs/{run_id}").json())["children"]:
        assert time.monotonic() < deadline, "the error flow did not start"
        time.sleep(0.05)
    [link] = failed["children"]
    assert link["parent_node"] == "$error_flow"
    handler = wait_for(api, link["id"], "completed")
    trigger = handler["trigger"]
    assert trigger["run_id"] == failed["id"]
    assert trigger["flow"] == {"id": flow_id, "name": "Fragile"}
    assert trigger["node"] == {"id": "boom", "name": "Boom", "type": "fail"}
    assert "bad" in trigger["error"]["message"]
    assert handler["parent_run_id"] == failed["id"]


def test_cancelling_a_parent_run_cancels_its_running_child(api: httpx.Client):
    save(api, chain(node("start", "chat-start"), node("nap", "sleep", seconds=20)), "Naps")
    parent_id = save(api, calling("Naps"), name="Waits for a nap")
    run_id = run(api, parent_id)
    deadline = time.monotonic() + 20
    while not (parent := api.get(f"/api/runs/{run_id}").json())["children"]:
        assert time.monotonic() < deadline, "the child run did not start"
        time.sleep(0.05)

    assert api.post(f"/api/runs/{run_id}/cancel").status_code == 200
    assert wait_for(api, run_id, "cancelled", "failed", "completed")["status"] == "cancelled"
    child = wait_for(api, parent["children"][0]["id"], "cancelled", "failed", "completed")
    assert child["status"] == "cancelled"
