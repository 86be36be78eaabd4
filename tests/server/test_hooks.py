"""Webhooks: a saved flow with a Webhook Trigger answers `POST /api/hooks/{path}` when the
request carries the node's secret (no bearer token); sync hooks answer with the run's
result, async hooks with 202; a wrong secret starts no run."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from nodeloom.testing.builders import chain, node

from .conftest import Server, start_server, stop_server
from .test_runs import save, wait_for

SECRET = "s3cret"


def hooked(path: str, **settings: Any) -> dict[str, Any]:
    """webhook-trigger -> json-transform: answers with the body's name, upper-cased."""
    return chain(
        node("hook", "webhook-trigger", path=path, secret=SECRET, **settings),
        node("shout", "json-transform", name="Shout", expression='{"text": $uppercase(body.name)}'),
    )


def unique(prefix: str) -> str:
    return f"{prefix}/{uuid.uuid4().hex[:8]}"


def hook_client(server: Server) -> httpx.Client:
    """A client without the bearer token: webhooks do not need it."""
    return server.client(token=None)


def test_a_sync_hook_answers_with_the_result_of_its_run(server: Server, api: httpx.Client):
    path = unique("orders/new")
    flow_id = save(api, hooked(path))
    response = hook_client(server).post(
        f"/api/hooks/{path}",
        json={"name": "ada"},
        params={"source": "shop"},
        headers={"X-Nodeloom-Secret": SECRET, "X-Shop": "1"},
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["status"] == "completed"
    assert answer["result"] == {"Shout": {"output": {"text": "ADA"}}}

    run = api.get(f"/api/runs/{answer['run_id']}").json()
    assert run["flow_id"] == flow_id
    trigger = run["trigger"]
    assert trigger["body"] == {"name": "ada"} and trigger["query"] == {"source": "shop"}
    assert trigger["headers"]["x-shop"] == "1"
    assert "x-nodeloom-secret" not in trigger["headers"]  # the secret is never recorded
    hook_output = run["timeline"][0]["outputs"]["output"]
    assert hook_output["body"] == {"name": "ada"}
    assert SECRET not in str(run)


def test_a_missing_or_wrong_secret_is_401_and_starts_no_run(server: Server, api: httpx.Client):
    path = unique("guarded")
    flow_id = save(api, hooked(path))
    client = hook_client(server)
    for headers in ({}, {"X-Nodeloom-Secret": "wrong"}, {"X-Other": SECRET}):
        response = client.post(f"/api/hooks/{path}", json={"name": "x"}, headers=headers)
        assert response.status_code == 401, response.text
        error = response.json()["error"]
        assert error["code"] == "unauthorized" and "X-Nodeloom-Secret" in error["message"]
    assert api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"] == []


def test_a_hook_may_name_its_own_secret_header(server: Server, api: httpx.Client):
    path = unique("custom")
    save(api, hooked(path, secret_header="X-Token"))
    client = hook_client(server)
    wrong = client.post(f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": SECRET})
    assert wrong.status_code == 401
    right = client.post(f"/api/hooks/{path}", json={"name": "b"}, headers={"X-Token": SECRET})
    assert right.json()["result"] == {"Shout": {"output": {"text": "B"}}}


def test_a_hook_secret_may_be_a_credential_read_at_each_call(server: Server, api: httpx.Client):
    path = unique("vaulted")
    name = f"hook_{uuid.uuid4().hex[:8]}"
    document = hooked(path)
    document["nodes"][0]["data"]["secret"] = f"{{{{ $credentials.{name} }}}}"
    flow_id = save(api, document)
    client = hook_client(server)

    missing = client.post(f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": ""})
    assert missing.status_code == 401  # no such credential yet: every request is refused
    assert api.put(f"/api/credentials/{name}", json={"value": "first"}).status_code == 200
    first = client.post(
        f"/api/hooks/{path}", json={"name": "c"}, headers={"X-Nodeloom-Secret": "first"}
    )
    assert first.status_code == 200, first.text
    assert api.put(f"/api/credentials/{name}", json={"value": "second"}).status_code == 200
    stale = client.post(f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": "first"})
    assert stale.status_code == 401
    literal = client.post(
        f"/api/hooks/{path}",
        json={},
        headers={"X-Nodeloom-Secret": document["nodes"][0]["data"]["secret"]},
    )
    assert literal.status_code == 401  # the reference itself is not the secret
    stored = api.get(f"/api/flows/{flow_id}").text
    assert "first" not in stored and "second" not in stored


def test_an_async_hook_answers_202_and_its_run_completes(server: Server, api: httpx.Client):
    path = unique("later")
    save(api, hooked(path, mode="async"))
    response = hook_client(server).post(
        f"/api/hooks/{path}", json={"name": "zed"}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    run_id = accepted["run_id"]
    assert accepted["run_url"] == f"/api/runs/{run_id}"
    assert accepted["events_url"] == f"/api/runs/{run_id}/events"
    run = wait_for(api, run_id, "completed")
    assert run["timeline"][1]["outputs"] == {"output": {"text": "ZED"}}


def test_a_sync_hook_whose_run_pauses_answers_202_and_the_run_resumes(
    server: Server, api: httpx.Client
):
    path = unique("approve")
    document = chain(
        node("hook", "webhook-trigger", path=path, secret=SECRET),
        node("q", "human-input", prompt="Ship it?"),
    )
    save(api, document)
    response = hook_client(server).post(
        f"/api/hooks/{path}", json={"id": 7}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["status"] == "paused"
    assert api.get(accepted["run_url"]).json()["status"] == "paused"

    resumed = api.post(f"/api/runs/{accepted['run_id']}/resume", json={"answers": {"q": "yes"}})
    assert resumed.status_code == 202, resumed.text
    assert wait_for(api, accepted["run_id"], "completed")["status"] == "completed"


def test_a_text_or_empty_body_reaches_the_flow_as_it_is(server: Server, api: httpx.Client):
    path = unique("raw")
    save(api, chain(node("hook", "webhook-trigger", path=path, secret=SECRET)))
    client = hook_client(server)
    headers = {"X-Nodeloom-Secret": SECRET}
    text = client.post(f"/api/hooks/{path}", content="plain words", headers=headers)
    assert text.json()["result"]["hook"]["output"]["body"] == "plain words"
    empty = client.post(f"/api/hooks/{path}", headers=headers)
    assert empty.json()["result"]["hook"]["output"]["body"] is None


def test_a_failed_run_is_422_naming_the_node(server: Server, api: httpx.Client):
    path = unique("failing")
    save(
        api,
        chain(
            node("hook", "webhook-trigger", path=path, secret=SECRET),
            node("boom", "json-transform", name="Boom", expression='$error("no stock")'),
        ),
    )
    response = hook_client(server).post(
        f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "run_failed"
    assert error["node_id"] == "boom" and "'Boom'" in error["message"]
    assert wait_for(api, error["run_id"], "failed")["status"] == "failed"


def test_a_sync_hook_past_its_timeout_is_504_and_the_run_goes_on(server: Server, api: httpx.Client):
    path = unique("slow")
    save(
        api,
        chain(
            node("hook", "webhook-trigger", path=path, secret=SECRET, timeout=0.2),
            node("nap", "sleep", seconds=1.0, value=1),
        ),
    )
    response = hook_client(server).post(
        f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 504, response.text
    error = response.json()["error"]
    assert error["code"] == "hook_timeout" and error["run_id"] in error["message"]
    assert wait_for(api, error["run_id"], "completed")["status"] == "completed"


def test_an_unknown_path_is_404(server: Server):
    response = hook_client(server).post(
        "/api/hooks/no/such/hook", json={}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_path_in_two_flows_is_409_naming_both(server: Server, api: httpx.Client):
    path = unique("twice")
    first = save(api, hooked(path), name="First")
    second = save(api, hooked(path), name="Second")
    response = hook_client(server).post(
        f"/api/hooks/{path}", json={}, headers={"X-Nodeloom-Secret": SECRET}
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "duplicate_hook"
    assert "'First'" in error["message"] and "'Second'" in error["message"]
    assert sorted(error["flows"]) == sorted([first, second])
    assert api.get("/api/runs", params={"flow_id": first}).json()["runs"] == []


def test_the_latest_version_of_a_flow_decides_its_path(server: Server, api: httpx.Client):
    old, new = unique("old"), unique("new")
    flow_id = save(api, hooked(old))
    client = hook_client(server)
    headers = {"X-Nodeloom-Secret": SECRET}
    assert client.post(f"/api/hooks/{old}", json={"name": "a"}, headers=headers).status_code == 200
    assert api.put(f"/api/flows/{flow_id}", json={"document": hooked(new)}).status_code == 200
    assert client.post(f"/api/hooks/{old}", json={}, headers=headers).status_code == 404
    assert client.post(f"/api/hooks/{new}", json={"name": "a"}, headers=headers).status_code == 200
    api.delete(f"/api/flows/{flow_id}")
    assert client.post(f"/api/hooks/{new}", json={}, headers=headers).status_code == 404


def test_an_invalid_path_parameter_is_422_on_save_naming_the_field(api: httpx.Client):
    response = api.post("/api/flows", json={"name": "bad", "document": hooked("/orders new")})
    assert response.status_code == 422
    issues = response.json()["error"]["issues"]
    assert [(i["node_id"], i["field"]) for i in issues] == [("hook", "path")]
    assert "orders/new" in issues[0]["message"]


def test_a_body_over_the_limit_is_413_on_a_hook_too(tmp_path):
    small = start_server(tmp_path, "--max-body-mb", "0.001")
    try:
        response = hook_client(small).post(
            "/api/hooks/any", content=b"x" * 5000, headers={"X-Nodeloom-Secret": SECRET}
        )
        assert response.status_code == 413
    finally:
        stop_server(small)
