"""Control across processes in a queue deployment: a cancel asked on a server reaches the
worker running the run; a paused run holds no worker slot and its answer is enqueued; a
sync webhook and a chat turn wait, on the server, for a run a worker executes."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from nodeloom.testing.builders import chain, graph, node

from ..server.conftest import read_frames
from .conftest import Fleet, marks, save, wait_for

pytestmark = pytest.mark.slow


def test_a_cancel_asked_on_a_server_stops_the_run_on_its_worker_at_once(
    fleet: Fleet, tmp_path: Path
):
    api = fleet.server().client()
    fleet.worker()
    log = tmp_path / "marks.txt"
    flow_id = save(api, chain(node("m0", "mark", path=str(log), seconds=30.0)))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "running", fleet=fleet)

    asked = time.monotonic()
    response = api.post(f"/api/runs/{run_id}/cancel")
    assert response.status_code == 200, response.text
    run = wait_for(api, run_id, "cancelled", within=10, fleet=fleet)
    assert time.monotonic() - asked < 5
    assert run["error"]["code"] == "cancelled"
    assert marks(log) == []


def test_a_queued_run_is_cancelled_before_any_worker_takes_it(fleet: Fleet, tmp_path: Path):
    api = fleet.server().client()  # no worker yet
    log = tmp_path / "marks.txt"
    flow_id = save(api, chain(node("m0", "mark", path=str(log))))
    run_id = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "queued"
    assert api.post(f"/api/runs/{run_id}/cancel").json()["status"] == "cancelled"

    fleet.worker()  # it is delivered the job: the run has ended, nothing runs
    later = api.post(f"/api/flows/{flow_id}/runs", json={}).json()["run_id"]
    wait_for(api, later, "completed", fleet=fleet)
    assert marks(log) == [f"{later} m0"]
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "cancelled"


def test_a_paused_run_holds_no_worker_slot_and_its_answer_is_enqueued(fleet: Fleet, tmp_path: Path):
    api = fleet.server().client()
    fleet.worker("--concurrency", "1")
    log = tmp_path / "marks.txt"
    asking = save(
        api,
        chain(node("q", "human-input", prompt="Name?"), node("m", "mark", path=str(log))),
        "ask",
    )
    paused = api.post(f"/api/flows/{asking}/runs", json={}).json()["run_id"]
    wait_for(api, paused, "paused", fleet=fleet)

    other = save(api, graph(node("m", "mark", path=str(log))), "other")
    meanwhile = api.post(f"/api/flows/{other}/runs", json={}).json()["run_id"]
    wait_for(api, meanwhile, "completed", within=30, fleet=fleet)  # the one slot was free

    fleet.redis.stop()  # the queue cannot take the answer: 503, the run stays paused
    refused = api.post(f"/api/runs/{paused}/resume", json={"answers": {"q": "Ada"}})
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "queue_unavailable"
    assert api.get(f"/api/runs/{paused}").json()["status"] == "paused"
    fleet.redis.start()
    answered = api.post(f"/api/runs/{paused}/resume", json={"answers": {"q": "Ada"}})
    assert answered.status_code == 202, answered.text
    run = wait_for(api, paused, "completed", "failed", fleet=fleet)
    assert run["status"] == "completed", run
    assert Counter(marks(log)) == {f"{meanwhile} m": 1, f"{paused} m": 1}
    refused = api.post(f"/api/runs/{paused}/resume", json={"answers": {"q": "again"}})
    assert refused.status_code == 409  # checked on the server before anything is enqueued


def test_a_sync_webhook_answers_with_the_result_of_the_run_a_worker_executed(fleet: Fleet):
    server = fleet.server()
    api = server.client()
    fleet.worker()
    save(
        api,
        chain(
            node("hook", "webhook-trigger", path="orders/new", secret="s3cret"),
            node(
                "shout",
                "json-transform",
                name="Shout",
                expression='{"text": $uppercase(body.name)}',
            ),
        ),
    )
    response = server.client(token=None).post(
        "/api/hooks/orders/new", json={"name": "ada"}, headers={"X-Nodeloom-Secret": "s3cret"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"] == {"Shout": {"output": {"text": "ADA"}}}
    run = api.get(f"/api/runs/{response.json()['run_id']}").json()
    assert run["status"] == "completed" and run["owner"]["pid"] != server.process.pid


def test_a_chat_turn_waits_for_the_run_a_worker_executed_and_answers(fleet: Fleet):
    api = fleet.server().client()
    fleet.worker()
    flow_id = save(
        api,
        chain(
            node("start", "chat-start"),
            node("shout", "json-transform", expression='{"text": $uppercase(message)}'),
        ),
    )
    response = api.post(f"/api/flows/{flow_id}/chat", json={"message": "hello"})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "completed"
    assert response.json()["answer"] == "HELLO"

    streamed = read_frames(
        api, f"/api/flows/{flow_id}/chat", method="POST", json={"message": "hi", "stream": True}
    )
    first, *events, last = streamed
    assert first.event == "ChatTurn" and last.event == "ChatReply"
    assert last.data["answer"] == "HI"
    run_events = [e for e in events if e.event != "FlowStep"]
    assert [e.id for e in run_events] == list(range(1, len(run_events) + 1))
    assert run_events[-1].event == "run_completed"
