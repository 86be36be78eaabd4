"""`--dev` has no authentication, so it resists DNS rebinding (only loopback, `localhost`
and `--public-host` names in `Host`) and cross-site requests (a state-changing request or a
WebSocket from another `Origin` is refused): a page open in the developer's browser cannot
drive the local server."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from .conftest import Server, start_server, stop_server
from .flows import shout
from .test_events import start


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = start_server(
        tmp_path_factory.mktemp("dev"), "--dev", "--public-host", "tunnel.example"
    )
    try:
        yield started
    finally:
        stop_server(started)


def port(server: Server) -> int:
    return int(urlsplit(server.url).port or 0)


def flow_names(server: Server) -> list[str]:
    flows = server.client(token=None).get("/api/flows").json()["flows"]
    return [flow["name"] for flow in flows]


def test_a_rebound_host_name_is_refused_for_reads_and_writes(dev: Server):
    client = dev.client(token=None)
    rebound = {"Host": f"evil.example:{port(dev)}"}
    read = client.get("/api/flows", headers=rebound)
    assert read.status_code == 403
    assert read.json()["error"]["code"] == "host_not_allowed"
    assert "evil.example" in read.json()["error"]["message"]
    body = {"name": "Planted", "document": shout()}
    write = client.post("/api/flows", json=body, headers=rebound)
    assert write.status_code == 403
    assert "Planted" not in flow_names(dev)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "tunnel.example"])
def test_loopback_names_and_the_public_host_are_answered(dev: Server, host: str):
    response = dev.client(token=None).get("/api/flows", headers={"Host": f"{host}:{port(dev)}"})
    assert response.status_code == 200


def test_a_cross_origin_state_changing_request_is_refused(dev: Server):
    client = dev.client(token=None)
    body = {"name": "From a web page", "document": shout()}
    refused = client.post("/api/flows", json=body, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "cross_origin_refused"
    other_port = client.post(
        "/api/flows", json=body, headers={"Origin": f"http://127.0.0.1:{port(dev) + 1}"}
    )
    assert other_port.status_code == 403
    assert "From a web page" not in flow_names(dev)

    same = client.post("/api/flows", json=body, headers={"Origin": dev.url})
    assert same.status_code == 201
    assert "From a web page" in flow_names(dev)


def test_a_cross_origin_websocket_is_refused(dev: Server):
    run_id = start(dev.client(token=None), shout())
    url = f"{dev.url.replace('http://', 'ws://', 1)}/api/runs/{run_id}/ws"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, origin="http://evil.example", open_timeout=10)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    with connect(url, origin=dev.url, open_timeout=10) as socket:  # type: ignore[arg-type]
        socket.recv(timeout=10)


def test_with_a_token_required_the_host_is_not_checked(server: Server):
    response = server.client().get("/api/flows", headers={"Host": "any.example"})
    assert response.status_code == 200
