"""API tokens over HTTP: created (shown once), listed (never shown), revoked (refused at
once), as with `nodeloom token`."""

from __future__ import annotations

import httpx

from .conftest import Server


def test_a_token_made_over_the_api_works_until_it_is_revoked(server: Server, api: httpx.Client):
    created = api.post("/api/tokens", json={"name": "ci robot"})
    assert created.status_code == 201, created.text
    new = created.json()
    assert new["name"] == "ci robot" and new["token"].startswith("nl_")

    listed = api.get("/api/tokens").json()["tokens"]
    assert {"id": new["id"], "name": "ci robot", "created_at": new["created_at"]} in listed
    assert new["token"] not in api.get("/api/tokens").text

    with server.client(token=new["token"]) as robot:
        assert robot.get("/api/flows").status_code == 200
        assert api.delete(f"/api/tokens/{new['id']}").status_code == 204
        refused = robot.get("/api/flows")
        assert refused.status_code == 401
    assert new["id"] not in {t["id"] for t in api.get("/api/tokens").json()["tokens"]}


def test_bad_token_requests_are_refused(api: httpx.Client):
    before = api.get("/api/tokens").json()["tokens"]
    for body in ({}, {"name": ""}, {"name": "x" * 201}):
        response = api.post("/api/tokens", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "invalid_request"
    unknown = api.delete("/api/tokens/nope")
    assert unknown.status_code == 404
    assert "nope" in unknown.json()["error"]["message"]
    assert api.get("/api/tokens").json()["tokens"] == before
