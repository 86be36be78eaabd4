"""A run's events over a WebSocket: the SSE stream's events as JSON messages (with the SSE
frame name as `frame`), resumable with from_seq, closed with 1000 after the run's last
event; a token in the header or `?token=`, refused without one; an unknown run is 4404."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from .conftest import Server, start_server, stop_server
from .flows import shout, slow
from .test_events import STEPS, start
from .test_runs import wait_for


def ws_url(server: Server, run_id: str, **params: Any) -> str:
    query = str(httpx.QueryParams(params))
    base = server.url.replace("http://", "ws://", 1)
    return f"{base}/api/runs/{run_id}/ws" + (f"?{query}" if query else "")


def open_socket(server: Server, run_id: str, *, bearer: bool = True, **params: Any):
    headers = {"Authorization": f"Bearer {server.token}"} if bearer else None
    return connect(ws_url(server, run_id, **params), additional_headers=headers, open_timeout=10)


def receive(socket: ClientConnection, limit: int | None = None) -> list[dict[str, Any]]:
    """The messages until the server closes (or the first `limit` of them)."""
    messages: list[dict[str, Any]] = []
    while limit is None or len(messages) < limit:
        try:
            text = socket.recv(timeout=30)
        except ConnectionClosed:
            break
        messages.append(json.loads(text))
    return messages


def assert_whole(messages: list[dict[str, Any]], run_id: str, count: int) -> None:
    assert [m["seq"] for m in messages] == list(range(1, count + 1))
    assert all(m["run_id"] == run_id for m in messages)


def test_a_live_run_streams_to_its_end_then_closes_with_1000(api: httpx.Client, server: Server):
    run_id = start(api, slow(STEPS, 0.1))
    with open_socket(server, run_id) as socket:
        messages = receive(socket)
        assert socket.close_code == 1000
    assert_whole(messages, run_id, 2 + 2 * STEPS)
    assert [m["frame"] for m in messages[:3]] == [
        "run_started",
        "FlowNodeStarted",
        "FlowNodeCompleted",
    ]
    assert messages[2]["event_type"] == "completed"
    assert messages[2]["data"]["outputs"] == {"output": 0}
    assert messages[-1]["frame"] == "run_completed"


def test_messages_are_the_sse_events_plus_their_frame_name(api: httpx.Client, server: Server):
    run_id = start(api, shout())
    wait_for(api, run_id, "completed")
    with open_socket(server, run_id) as socket:
        messages = receive(socket)
    with api.stream("GET", f"/api/runs/{run_id}/events") as response:
        datas = [json.loads(line[5:]) for line in response.iter_lines() if line[:5] == "data:"]
    assert [{k: v for k, v in m.items() if k != "frame"} for m in messages] == datas


def test_a_reconnect_with_from_seq_gets_exactly_the_missing_events(
    api: httpx.Client, server: Server
):
    run_id = start(api, slow(STEPS, 0.3))
    with open_socket(server, run_id) as socket:
        first = receive(socket, limit=3)
    assert [m["seq"] for m in first] == [1, 2, 3]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "running"  # still live

    with open_socket(server, run_id, from_seq=first[-1]["seq"] + 1) as socket:
        rest = receive(socket)
        assert socket.close_code == 1000
    assert_whole(first + rest, run_id, 2 + 2 * STEPS)
    assert rest[-1]["frame"] == "run_completed"


def test_reconnects_at_every_point_of_a_live_run_miss_nothing(api: httpx.Client, server: Server):
    run_id = start(api, slow(STEPS, 0.15))
    seen: list[dict[str, Any]] = []
    while not seen or seen[-1]["event_type"] != "run_completed":
        with open_socket(server, run_id, from_seq=seen[-1]["seq"] + 1 if seen else 1) as socket:
            seen += receive(socket, limit=1)
    assert_whole(seen, run_id, 2 + 2 * STEPS)


def test_from_seq_after_the_run_ended(api: httpx.Client, server: Server):
    run_id = start(api, slow(2, 0))
    wait_for(api, run_id, "completed")
    with open_socket(server, run_id, from_seq=4) as socket:
        assert [m["seq"] for m in receive(socket)] == [4, 5, 6]
    with open_socket(server, run_id, from_seq=7) as socket:
        assert receive(socket) == []
        assert socket.close_code == 1000


def test_the_token_may_come_as_a_query_parameter(api: httpx.Client, server: Server):
    run_id = start(api, shout())
    with open_socket(server, run_id, bearer=False, token=server.token) as socket:
        assert_whole(receive(socket), run_id, 6)


def test_a_query_token_never_reaches_the_server_log(api: httpx.Client, server: Server):
    run_id = start(api, shout())
    with open_socket(server, run_id, bearer=False, token=server.token) as socket:
        assert_whole(receive(socket), run_id, 6)
    with pytest.raises(InvalidStatus):  # refused requests are logged too
        open_socket(server, run_id, bearer=False, token=server.token + "x")
    log = server.log.read_text()
    assert f"/api/runs/{run_id}/ws?token=***" in log  # the line is there, masked
    assert server.token not in log


@pytest.mark.parametrize("token", [None, "nl_wrong"])
def test_a_connection_without_a_valid_token_is_refused_with_403(
    api: httpx.Client, server: Server, token: str | None
):
    run_id = start(api, shout())
    params = {"token": token} if token else {}
    with pytest.raises(InvalidStatus) as refused:
        open_socket(server, run_id, bearer=False, **params)
    assert refused.value.response.status_code == 403  # closed with 1008 before accepting


def test_a_wrong_bearer_header_is_refused_even_with_nothing_else(server: Server):
    url = ws_url(server, "some-id")
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"Authorization": "Bearer nl_wrong"}, open_timeout=10)
    assert refused.value.response.status_code == 403


def test_an_unknown_run_is_closed_with_4404(server: Server):
    with open_socket(server, "no-such-run") as socket:
        assert receive(socket) == []
        assert socket.close_code == 4404
        assert "no-such-run" in (socket.close_reason or "")


def test_dev_mode_needs_no_token(tmp_path: Path):
    dev = start_server(tmp_path, "--dev")
    try:
        api = dev.client(token=None)
        run_id = start(api, shout())
        with connect(ws_url(dev, run_id), open_timeout=10) as socket:
            assert_whole(receive(socket), run_id, 6)
    finally:
        stop_server(dev)


def test_a_from_seq_that_is_not_a_seq_is_refused(api: httpx.Client, server: Server):
    run_id = start(api, shout())
    with pytest.raises(InvalidStatus) as refused:
        open_socket(server, run_id, from_seq=0)
    assert refused.value.response.status_code == 403
