"""Server-side request forgery through the real server: a saved flow whose HTTP Request
points at a loopback, link-local or private-resolving destination fails with
`ssrf_blocked`, naming the node, and no request reaches the target."""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.testing.builders import chain, node

from .echo import EchoServer, echo_server
from .test_runs import save, wait_for


def request_flow(url: str) -> dict[str, Any]:
    return chain(node("start", "chat-start"), node("fetch", "http-request", name="Fetch", url=url))


@pytest.fixture
def target() -> Any:
    assert not os.environ.get(ENV_ALLOW_PRIVATE), f"unset {ENV_ALLOW_PRIVATE} to run these"
    with echo_server() as server:
        yield server


def refused_run(api: httpx.Client, url: str) -> dict[str, Any]:
    flow_id = save(api, request_flow(url), "ssrf")
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={"message": "go"}).json()["run_id"]
    run = wait_for(api, run_id, "completed", "failed")
    assert run["status"] == "failed", run
    error = run["error"]
    assert error["code"] == "ssrf_blocked", error
    assert error["node_id"] == "fetch" and error["node_name"] == "Fetch"
    assert "refused to connect" in error["message"]
    return run


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/secret",
        "http://localhost:{port}/secret",  # a name that resolves to loopback
        "http://[::ffff:127.0.0.1]:{port}/secret",  # loopback written as IPv6
    ],
)
def test_a_loopback_destination_is_refused_before_any_request(
    api: httpx.Client, target: EchoServer, url: str
):
    run = refused_run(api, url.format(port=target.port))
    assert target.hits == 0
    assert [row["status"] for row in run["timeline"]] == ["completed", "failed"]


def test_the_cloud_metadata_address_is_refused(api: httpx.Client):
    run = refused_run(api, "http://169.254.169.254/latest/meta-data/")
    assert "link-local" in run["error"]["message"]


def test_the_same_flow_reaches_the_target_when_the_node_allows_the_private_network(
    api: httpx.Client, target: EchoServer
):
    document = request_flow(f"http://127.0.0.1:{target.port}/ok")
    document["nodes"][1]["data"]["allow_private_network"] = True
    flow_id = save(api, document, "allowed")
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={"message": "go"}).json()["run_id"]
    assert wait_for(api, run_id, "completed", "failed")["status"] == "completed"
    assert target.hits == 1
