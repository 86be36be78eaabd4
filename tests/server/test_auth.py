"""Every /api endpoint needs a valid bearer token; `--dev` turns that off, on loopback only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nodeloom.server import ServerConfig, create_app

from .conftest import Server, nodeloom, server_environment, start_server, stop_server


def api_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the app under /api and /v1, and /metrics, from its OpenAPI
    schema, but webhooks (their secret is their auth: tests/server/test_hooks.py),
    decision links (their signature is their auth: tests/server/test_decisions.py) and
    the health probe (codes and counts only: tests/server/test_operations.py)."""
    schema = create_app(ServerConfig()).openapi()
    found = []
    for path, operations in schema["paths"].items():
        if (
            path.startswith(("/api", "/v1", "/metrics"))
            and not path.startswith(("/api/hooks/", "/api/decisions/"))
            and path != "/api/health"
        ):
            concrete = re.sub(r"\{[^}]+\}", "some-id", path)
            found += [(method.upper(), concrete) for method in sorted(operations)]
    return found


ROUTES = api_routes()


def test_every_api_route_is_listed():
    assert len(ROUTES) >= 13
    assert ("GET", "/api/runs/some-id/events") in ROUTES


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_request_without_a_token_is_refused_with_401(server: Server, method, path):
    response = server.client(token=None).request(method, path, json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    error = response.json()["error"]
    assert error["code"] == "unauthorized"
    assert "nodeloom token create" in error["message"]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_request_with_a_wrong_token_is_refused_with_401(server: Server, method, path):
    response = server.client(token="nl_not-a-token").request(method, path, json={})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_a_malformed_authorization_header_is_refused_with_401(server: Server):
    client = server.client(token=None)
    response = client.get("/api/flows", headers={"Authorization": f"Basic {server.token}"})
    assert response.status_code == 401


def test_the_health_check_and_the_schema_need_no_token(server: Server):
    client = server.client(token=None)
    assert client.get("/health").json()["status"] == "ok"
    schema = client.get("/openapi.json").json()
    assert "HTTPBearer" in schema["components"]["securitySchemes"]


def test_a_created_token_works_at_once_and_a_revoked_one_stops_at_once(server: Server):
    created = nodeloom(server.env, "token", "create", "laptop", "--json")
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)
    client = server.client(token=token["token"])
    assert client.get("/api/flows").status_code == 200

    listed = nodeloom(server.env, "token", "list")
    assert token["id"] in listed.stdout and "laptop" in listed.stdout
    assert token["token"] not in listed.stdout  # never shown again

    revoked = nodeloom(server.env, "token", "revoke", token["id"])
    assert revoked.returncode == 0, revoked.stderr
    assert client.get("/api/flows").status_code == 401
    assert server.client().get("/api/flows").status_code == 200  # the others still work


def test_tokens_are_stored_hashed_in_a_private_file(server: Server):
    path = Path(server.env["NODELOOM_DATA_DIR"]) / "tokens.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert server.token not in path.read_text()


def test_revoking_an_unknown_token_fails_with_exit_2(server: Server):
    done = nodeloom(server.env, "token", "revoke", "nope")
    assert done.returncode == 2
    assert "no token with id 'nope'" in done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_dev_mode_refuses_to_listen_beyond_loopback(tmp_path, host):
    done = nodeloom(server_environment(tmp_path), "serve", "--dev", "--host", host)
    assert done.returncode == 2
    assert "--dev" in done.stderr and "loopback" in done.stderr


def test_dev_mode_on_loopback_needs_no_token(tmp_path):
    dev = start_server(tmp_path, "--dev")
    try:
        assert dev.client(token=None).get("/api/flows").status_code == 200
    finally:
        stop_server(dev)
