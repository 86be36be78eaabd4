"""Credentials through the real server: PUT (write-only), GET (names and times), DELETE;
a flow that sends one in a header keeps it out of every stored event and API answer."""

from __future__ import annotations

import json
from typing import Any

import httpx

from nodeloom.testing.builders import chain, node

from .conftest import Server, read_frames
from .echo import echo_server
from .test_runs import save, wait_for

SECRET = "Zq8-credential-value-41c7"


def bearer_flow(port: int) -> dict[str, Any]:
    return chain(
        node("start", "chat-start"),
        node(
            "call",
            "http-request",
            name="Call",
            url=f"http://127.0.0.1:{port}/echo",
            headers={"Authorization": "Bearer {{ $credentials.token }}"},
            allow_private_network=True,
        ),
    )


def test_credentials_are_saved_listed_with_times_and_deleted_but_never_returned(
    api: httpx.Client,
):
    saved = api.put("/api/credentials/listed", json={"value": SECRET})
    assert saved.status_code == 200, saved.text
    assert set(saved.json()) == {"name", "created_at", "updated_at"}
    listed = api.get("/api/credentials")
    assert listed.status_code == 200
    names = {c["name"]: c for c in listed.json()["credentials"]}
    assert set(names["listed"]) == {"name", "created_at", "updated_at"}
    assert SECRET not in saved.text + listed.text
    assert api.delete("/api/credentials/listed").status_code == 204
    assert "listed" not in [c["name"] for c in api.get("/api/credentials").json()["credentials"]]
    missing = api.delete("/api/credentials/listed")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


def test_a_bad_name_or_an_empty_value_is_refused(api: httpx.Client):
    bad = api.put("/api/credentials/has-dash", json={"value": "v"})
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "credential_name"
    assert api.put("/api/credentials/ok", json={"value": ""}).status_code == 422


def test_credential_routes_need_the_token(server: Server):
    anonymous = server.client(token=None)
    assert anonymous.get("/api/credentials").status_code == 401
    assert anonymous.put("/api/credentials/x", json={"value": "v"}).status_code == 401
    assert anonymous.delete("/api/credentials/x").status_code == 401


def test_a_secret_sent_in_a_header_appears_in_no_event_and_no_answer(
    api: httpx.Client, server: Server
):
    assert api.put("/api/credentials/token", json={"value": SECRET}).status_code == 200
    with echo_server() as echo:
        flow_id = save(api, bearer_flow(echo.port), "bearer")
        run_id = api.post(f"/api/flows/{flow_id}/runs", json={"message": "go"}).json()["run_id"]
        run = wait_for(api, run_id, "completed", "failed")
        assert echo.hits == 1
    assert run["status"] == "completed", run
    echoed = run["timeline"][1]["outputs"]["response"]["body"]["headers"]
    assert echoed["Authorization"] == "***"  # the target got it; the record did not
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    assert [f.event for f in frames][-1] == "run_completed"
    answers = [run, api.get(f"/api/runs/{run_id}").text, [f.data for f in frames]]
    answers.append(api.get("/api/runs").text)
    for answer in answers:
        assert SECRET not in (answer if isinstance(answer, str) else json.dumps(answer))
    assert SECRET not in server.log.read_text()
