"""The OpenAI-compatible endpoint, driven by the official `openai` client: saved flows are
models, a chat completion is a recorded run (plain or streamed), failures and pauses are
OpenAI-style errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.testing.builders import chain, node

from .conftest import Server, serving
from .flows import ask, completion


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The mock LLM a flow names (its node's base_url) listens on loopback."""
    yield from serving(tmp_path_factory, {ENV_ALLOW_PRIVATE: "1"})


@pytest.fixture
def client(server: Server) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.token, max_retries=0) as c:
        yield c


def save(api: httpx.Client, document: dict[str, Any], name: str) -> str:
    response = api.post("/api/flows", json={"name": name, "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["flow_id"])


def echo() -> dict[str, Any]:
    """chat-start -> prompt-template: no LLM."""
    return chain(
        node("start", "chat-start"),
        node("say", "prompt-template", template="You said: {{ $json.message }}"),
    )


def test_saved_flows_are_listed_as_models(api: httpx.Client, client: openai.OpenAI):
    flow_id = save(api, echo(), "Echo models")
    models = {model.id: model for model in client.models.list()}
    assert flow_id in models
    assert models[flow_id].owned_by == "nodeloom"
    assert client.models.retrieve("Echo models").id == flow_id


def test_a_completion_runs_the_flow_and_answers_its_end_node_output(
    api: httpx.Client, client: openai.OpenAI
):
    flow_id = save(api, echo(), "Echo plain")
    answer = client.chat.completions.create(
        model=flow_id, messages=[{"role": "user", "content": "hello"}]
    )
    assert answer.choices[0].message.content == "You said: hello"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == flow_id

    run_id = answer.model_extra["nodeloom"]["run_id"]
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "completed" and run["flow_id"] == flow_id
    assert run["trigger"] == {"message": "hello"}


def test_the_flow_name_works_as_the_model_and_the_last_user_message_is_the_input(
    api: httpx.Client, client: openai.OpenAI
):
    save(api, echo(), "Echo by name")
    answer = client.chat.completions.create(
        model="Echo by name",
        messages=[
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "You said: first"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ],
    )
    assert answer.choices[0].message.content == "You said: second"


def test_two_callers_behind_one_token_who_both_say_hi_do_not_share_a_conversation(
    api: httpx.Client, client: openai.OpenAI
):
    flow_id = save(api, echo(), "Echo strangers")
    hi = [{"role": "user", "content": "hi"}]
    first = client.chat.completions.create(model=flow_id, messages=hi)
    second = client.chat.completions.create(model=flow_id, messages=hi)
    chat_ids = [t.model_extra["nodeloom"]["chat_id"] for t in (first, second)]
    assert chat_ids[0] != chat_ids[1]
    for chat_id, turn in zip(chat_ids, (first, second), strict=True):
        runs = api.get("/api/runs", params={"chat_id": chat_id}).json()["runs"]
        assert [r["id"] for r in runs] == [turn.model_extra["nodeloom"]["run_id"]]


def test_user_or_the_x_chat_id_header_names_a_conversation_that_goes_on(
    api: httpx.Client, client: openai.OpenAI
):
    flow_id = save(api, echo(), "Echo chat")
    first = [{"role": "user", "content": "hi"}]
    named = client.chat.completions.create(model=flow_id, messages=first, user="conv-7")
    assert named.model_extra["nodeloom"]["chat_id"] == "conv-7"
    runs = api.get("/api/runs", params={"chat_id": "conv-7"}).json()["runs"]
    assert [r["id"] for r in runs] == [named.model_extra["nodeloom"]["run_id"]]

    body = {"model": flow_id, "messages": first}
    turn1 = api.post("/v1/chat/completions", json=body, headers={"X-Chat-Id": "conv-8"})
    later = [*first, {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
    turn2 = api.post(
        "/v1/chat/completions", json={**body, "messages": later}, headers={"X-Chat-Id": "conv-8"}
    )
    assert [t.headers["X-Nodeloom-Chat-Id"] for t in (turn1, turn2)] == ["conv-8", "conv-8"]
    runs = api.get("/api/runs", params={"chat_id": "conv-8"}).json()["runs"]
    assert len(runs) == 2


def test_a_streamed_completion_without_tokens_sends_the_answer_as_one_delta(
    api: httpx.Client, client: openai.OpenAI
):
    flow_id = save(api, echo(), "Echo stream")
    chunks = list(
        client.chat.completions.create(
            model=flow_id, messages=[{"role": "user", "content": "hello"}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "You said: hello"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)


def test_the_stream_is_sse_ending_with_done(api: httpx.Client):
    flow_id = save(api, echo(), "Echo raw")
    body = {"model": flow_id, "messages": [{"role": "user", "content": "x"}], "stream": True}
    with api.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"


def test_an_llm_flow_streams_its_tokens(api: httpx.Client, client: openai.OpenAI, mock_llm):
    flow_id = save(api, completion(mock_llm.base_url), "LLM stream")
    chunks = list(
        client.chat.completions.create(
            model=flow_id, messages=[{"role": "user", "content": "tell me more"}], stream=True
        )
    )
    deltas = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert "".join(deltas) == "mock reply to: tell me more"
    assert len(deltas) > 1  # token by token, not one final delta
    assert mock_llm.requests[0].last_message == "tell me more"


def test_a_wrong_token_is_an_authentication_error(server: Server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="nl_wrong", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError):
            bad.models.list()
        with pytest.raises(openai.AuthenticationError):
            bad.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])


def test_an_unknown_model_is_not_found(client: openai.OpenAI):
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    assert caught.value.code == "model_not_found"
    assert caught.value.type == "invalid_request_error"


def test_a_failed_run_is_422_run_failed_naming_the_node(api: httpx.Client, client: openai.OpenAI):
    document = chain(node("start", "chat-start"), node("bad", "fail", name="Bad", message="no"))
    flow_id = save(api, document, "Failing")
    for stream in (False, True):
        with pytest.raises(openai.UnprocessableEntityError) as caught:
            client.chat.completions.create(
                model=flow_id, messages=[{"role": "user", "content": "x"}], stream=stream
            )
        error = caught.value.body
        assert caught.value.code == "run_failed"
        assert error["node_id"] == "bad" and "'Bad'" in error["message"]
        assert api.get(f"/api/runs/{error['run_id']}").json()["status"] == "failed"


def test_a_paused_run_is_409_naming_the_waiting_nodes(api: httpx.Client, client: openai.OpenAI):
    flow_id = save(api, ask(), "Asking")
    with pytest.raises(openai.ConflictError) as caught:
        client.chat.completions.create(model=flow_id, messages=[{"role": "user", "content": "x"}])
    error = caught.value.body
    assert caught.value.code == "run_paused"
    assert [w["node_id"] for w in error["waiting"]] == ["q"]
    assert api.get(f"/api/runs/{error['run_id']}").json()["status"] == "paused"


def test_a_conversation_without_a_user_message_is_refused(api: httpx.Client):
    flow_id = save(api, echo(), "Echo refused")
    body = {"model": flow_id, "messages": [{"role": "system", "content": "x"}]}
    response = api.post("/v1/chat/completions", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
