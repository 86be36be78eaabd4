"""Answers given through the API that do not fit their waiting node are invalid input:
`POST /api/runs/{id}/resume` answers 422 with the accepted forms, and the run stays paused
for a fitting answer."""

from __future__ import annotations

import httpx

from nodeloom.testing.builders import chain, edge, graph, node

from .test_runs import save, wait_for


def paused_run(api: httpx.Client, document: dict) -> str:
    run_id = api.post(f"/api/flows/{save(api, document)}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused")
    return str(run_id)


def test_maybe_for_an_approval_is_422_and_the_run_stays_paused(api: httpx.Client):
    run_id = paused_run(
        api,
        graph(
            node("ok", "approval", name="Approve"),
            node("after", "prompt-template", template="sent"),
            edge("ok", "after", "approve"),
        ),
    )

    refused = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"Approve": "maybe"}})

    assert refused.status_code == 422, refused.text
    [issue] = refused.json()["error"]["issues"]
    assert issue["code"] == "invalid_answer" and issue["node_id"] == "ok"
    assert "'maybe' is not an approval decision" in issue["message"]
    assert "approve (or approved, yes, y, ok) or reject" in issue["message"]
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "paused" and [r["node_id"] for r in run["timeline"]] == ["ok"]

    accepted = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"Approve": "yes"}})
    assert accepted.status_code == 202, accepted.text
    done = wait_for(api, run_id, "completed")
    assert done["timeline"][-1]["outputs"] == {"output": {"text": "sent"}}


def test_a_form_answer_of_the_wrong_type_is_422_listing_the_fields(api: httpx.Client):
    fields = [{"name": "age", "type": "number"}]
    run_id = paused_run(api, chain(node("f", "human-input", name="Profile", fields=fields)))

    refused = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"f": {"age": "old"}}})

    assert refused.status_code == 422, refused.text
    [issue] = refused.json()["error"]["issues"]
    assert "field 'age' must be a number" in issue["message"]
    assert "it accepts an object {age: number}" in issue["message"]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "paused"
