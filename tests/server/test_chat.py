"""POST /api/flows/{id}/chat: a turn of a conversation with a saved flow, answered as a
ChatReply, or streamed as the run's events followed by the ChatReply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.testing.builders import chain, node

from .conftest import Server, read_frames, serving
from .flows import ask, completion, shout, slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The mock LLM a flow names (its node's base_url) listens on loopback."""
    yield from serving(tmp_path_factory, {ENV_ALLOW_PRIVATE: "1"})


def save(api: httpx.Client, document: dict[str, Any], name: str) -> str:
    response = api.post("/api/flows", json={"name": name, "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["flow_id"])


def remembering() -> dict[str, Any]:
    """Answers with every message of the conversation so far (the Agent's chat memory is
    out of reach without an LLM: the runs of a chat_id are what it reads)."""
    return chain(
        node("start", "chat-start"),
        node("say", "prompt-template", template="You said: {{ $json.message }}"),
    )


def test_a_turn_answers_a_chat_reply_and_records_the_run(api: httpx.Client):
    flow_id = save(api, shout(), "Chat shout")
    response = api.post(f"/api/flows/{flow_id}/chat", json={"message": "hello"})
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["status"] == "completed"
    assert reply["answer"] == "HELLO"
    assert reply["waiting"] == [] and reply["error"] is None
    assert response.headers["X-Nodeloom-Run-Id"] == reply["run_id"]
    assert response.headers["X-Nodeloom-Chat-Id"] == reply["chat_id"]

    run = api.get(reply["run_url"]).json()
    assert run["status"] == "completed"
    assert run["chat_id"] == reply["chat_id"] and run["flow_id"] == flow_id
    assert run["trigger"] == {"message": "hello"}


def test_the_chat_id_made_on_the_first_turn_carries_the_conversation(api: httpx.Client):
    flow_id = save(api, remembering(), "Chat memory")
    first = api.post(f"/api/flows/{flow_id}/chat", json={"message": "one"}).json()
    chat_id = first["chat_id"]
    second = api.post(
        f"/api/flows/{flow_id}/chat", json={"message": "two", "chat_id": chat_id}
    ).json()
    other = api.post(f"/api/flows/{flow_id}/chat", json={"message": "three"}).json()

    assert second["chat_id"] == chat_id != other["chat_id"]
    assert second["answer"] == "You said: two"
    runs = api.get("/api/runs", params={"chat_id": chat_id}).json()["runs"]
    assert [r["id"] for r in runs] == [second["run_id"], first["run_id"]]


def test_a_streamed_turn_sends_the_run_events_between_its_first_and_last_frames(
    api: httpx.Client,
):
    flow_id = save(api, shout(), "Chat stream")
    frames = read_frames(
        api, f"/api/flows/{flow_id}/chat", method="POST", json={"message": "hi", "stream": True}
    )
    first, *events, last = frames
    assert first.event == "ChatTurn" and first.id is None
    run_id = first.data["run_id"]
    assert last.event == "ChatReply" and last.id is None
    assert last.data["answer"] == "HI" and last.data["run_id"] == run_id
    assert last.data["chat_id"] == first.data["chat_id"]

    steps = [e for e in events if e.event == "FlowStep"]  # a node's block after its event
    assert [(s.data["node_id"], s.data["status"]) for s in steps] == [
        ("shout", "started"),
        ("shout", "completed"),
    ]
    events = [e for e in events if e.event != "FlowStep"]
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert {e.data["run_id"] for e in events} == {run_id}
    names = [e.event for e in events]
    assert names[0] == "run_started" and names[-1] == "run_completed"
    assert names.count("FlowNodeStarted") == names.count("FlowNodeCompleted") == 2
    # The same events as the run's own stream, frame for frame.
    replay = read_frames(api, f"/api/runs/{run_id}/events")
    assert [(e.id, e.event, e.data) for e in replay] == [(e.id, e.event, e.data) for e in events]


def test_an_llm_turn_streams_its_tokens_as_run_content(api: httpx.Client, mock_llm):
    flow_id = save(api, completion(mock_llm.base_url), "Chat LLM")
    frames = read_frames(
        api,
        f"/api/flows/{flow_id}/chat",
        method="POST",
        json={"message": "tell me more", "stream": True},
    )
    tokens = [f.data["data"]["token"] for f in frames if f.event == "RunContent"]
    assert len(tokens) > 1
    assert "".join(tokens) == "mock reply to: tell me more"
    assert frames[-1].data["answer"] == "mock reply to: tell me more"


def test_a_paused_turn_says_who_waits_and_resumes_to_an_answer(api: httpx.Client):
    flow_id = save(api, ask(), "Chat ask")
    for stream in (False, True):
        body = {"message": "x", "stream": stream}
        if stream:
            reply = read_frames(api, f"/api/flows/{flow_id}/chat", method="POST", json=body)[
                -1
            ].data
        else:
            reply = api.post(f"/api/flows/{flow_id}/chat", json=body).json()
        assert reply["status"] == "paused" and reply["answer"] is None
        (waiting,) = reply["waiting"]
        assert (waiting["node_id"], waiting["node_name"], waiting["kind"]) == ("q", "q", "input")
        assert waiting["prompt"] == "Name?"  # what the node asks, for the chat to show

    resumed = api.post(f"/api/runs/{reply['run_id']}/resume", json={"answers": {"q": "Ada"}})
    assert resumed.status_code == 202, resumed.text
    events = read_frames(api, resumed.json()["events_url"])
    assert events[-1].event == "run_completed"
    assert api.get(reply["run_url"]).json()["status"] == "completed"


def test_a_failed_turn_names_the_node(api: httpx.Client):
    document = chain(node("start", "chat-start"), node("bad", "fail", name="Bad", message="no"))
    flow_id = save(api, document, "Chat failing")
    reply = api.post(f"/api/flows/{flow_id}/chat", json={"message": "x"}).json()
    assert reply["status"] == "failed" and reply["answer"] is None
    assert reply["error"]["node_id"] == "bad" and reply["error"]["node_name"] == "Bad"


def test_bad_turns_are_refused_before_anything_runs(api: httpx.Client):
    flow_id = save(api, shout(), "Chat refusals")
    before = len(api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"])
    unknown = api.post("/api/flows/nope/chat", json={"message": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    for body in ({}, {"message": "x", "chat_id": ""}, {"message": "x", "version": 2**63}):
        response = api.post(f"/api/flows/{flow_id}/chat", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "invalid_request"
    missing = api.post(f"/api/flows/{flow_id}/chat", json={"message": "x", "version": 9})
    assert missing.status_code == 404
    assert len(api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"]) == before


def test_a_turn_cancelled_while_it_streams_ends_with_a_cancelled_reply(api: httpx.Client):
    flow_id = save(api, slow(steps=20, seconds=0.2), "Chat slow")
    body = {"message": "x", "stream": True}
    frames = []
    with api.stream("POST", f"/api/flows/{flow_id}/chat", json=body) as response:
        assert response.status_code == 200
        run_id = response.headers["X-Nodeloom-Run-Id"]
        cancelled = False
        for line in response.iter_lines():
            if line.startswith("event: "):
                frames.append(line.removeprefix("event: "))
            if not cancelled and frames.count("FlowNodeCompleted") == 1:
                assert api.post(f"/api/runs/{run_id}/cancel").status_code == 200
                cancelled = True
            if line.startswith("data: ") and frames[-1] == "ChatReply":
                reply = json.loads(line.removeprefix("data: "))
    assert frames[-2:] == ["run_cancelled", "ChatReply"]
    assert reply["status"] == "cancelled" and reply["answer"] is None
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "cancelled"
