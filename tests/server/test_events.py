"""A run's events over SSE: every frame `id: <seq>`, named as the seed 003 chat mapping;
the stream ends after the run's last event; a reconnect with Last-Event-ID (or from_seq)
gets exactly the missing events, once and in order, whether the run is live or over."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from .conftest import Frame, Server, read_frames
from .flows import shout, slow
from .test_runs import save, wait_for

STEPS = 5  # a run of `slow(STEPS)` emits 2 run events and 2 per node


def start(api: httpx.Client, document: dict) -> str:
    flow_id = save(api, document)
    return str(api.post(f"/api/flows/{flow_id}/runs", json={"message": "hi"}).json()["run_id"])


def assert_whole(frames: list[Frame], run_id: str, count: int) -> None:
    assert [f.id for f in frames] == list(range(1, count + 1))
    assert all(f.data["seq"] == f.id and f.data["run_id"] == run_id for f in frames)


def test_a_live_run_streams_to_its_end(api: httpx.Client):
    run_id = start(api, slow(STEPS, 0.1))
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    assert_whole(frames, run_id, 2 + 2 * STEPS)
    assert [f.event for f in frames[:3]] == ["run_started", "FlowNodeStarted", "FlowNodeCompleted"]
    assert frames[-1].event == "run_completed"
    assert frames[2].data["event_type"] == "completed"
    assert frames[2].data["node_id"] == "s0"
    assert frames[2].data["data"]["outputs"] == {"output": 0}


def test_a_finished_run_streams_from_the_store(api: httpx.Client):
    run_id = start(api, shout())
    wait_for(api, run_id, "completed")
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    assert_whole(frames, run_id, 6)
    assert frames[-1].event == "run_completed"


def test_a_reconnect_mid_stream_gets_exactly_the_missing_events(api: httpx.Client):
    run_id = start(api, slow(STEPS, 0.3))
    first = read_frames(api, f"/api/runs/{run_id}/events", limit=3)
    assert [f.id for f in first] == [1, 2, 3]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "running"  # still live

    rest = read_frames(api, f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "3"})
    assert_whole(first + rest, run_id, 2 + 2 * STEPS)
    assert rest[-1].event == "run_completed"


def test_reconnects_at_every_point_of_a_live_run_miss_nothing(api: httpx.Client):
    run_id = start(api, slow(STEPS, 0.15))
    seen: list[Frame] = []
    while not seen or seen[-1].event != "run_completed":
        headers = {"Last-Event-ID": str(seen[-1].id)} if seen else {}
        seen += read_frames(api, f"/api/runs/{run_id}/events", limit=1, headers=headers)
    assert_whole(seen, run_id, 2 + 2 * STEPS)


def test_from_seq_and_last_event_id_after_the_run_ended(api: httpx.Client):
    run_id = start(api, slow(2, 0))
    wait_for(api, run_id, "completed")
    tail = read_frames(api, f"/api/runs/{run_id}/events", params={"from_seq": 4})
    assert [f.id for f in tail] == [4, 5, 6]
    after = read_frames(api, f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "5"})
    assert [f.id for f in after] == [6]
    nothing = read_frames(api, f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "6"})
    assert nothing == []


def test_a_bad_last_event_id_is_422(api: httpx.Client):
    run_id = start(api, shout())
    response = api.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "abc"})
    assert response.status_code == 422
    assert "Last-Event-ID" in response.json()["error"]["message"]


def test_several_listeners_at_once_each_get_every_event(api: httpx.Client, server: Server):
    run_id = start(api, slow(3, 0.2))
    clients = [server.client() for _ in range(3)]
    with ThreadPoolExecutor(len(clients)) as pool:
        streams = list(pool.map(lambda c: read_frames(c, f"/api/runs/{run_id}/events"), clients))
    for frames in streams:
        assert frames == streams[0]
    assert_whole(streams[0], run_id, 8)
