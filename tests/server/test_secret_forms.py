"""Secrets stay secret in derived forms, through the real server: `$credentials` is refused
outside secret-capable parameters; what a header renders from one (upper-cased, sliced) is
masked whole; a key the model streams in two tokens is masked in the stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.testing.builders import chain, node
from nodeloom.testing.mock_llm import MockLLM

from .conftest import Server, read_frames, serving
from .echo import echo_server
from .test_runs import save, wait_for

SECRET = "Kp3-derived-forms-9d2e"
SPLIT = "Kp3-split 9d2e-two"  # the mock LLM streams word by word: two tokens


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The mock LLM a flow names (its node's base_url) listens on loopback."""
    yield from serving(tmp_path_factory, {ENV_ALLOW_PRIVATE: "1"})


def derived_flow(port: int) -> dict[str, Any]:
    return chain(
        node("start", "chat-start"),
        node(
            "call",
            "http-request",
            name="Call",
            url=f"http://127.0.0.1:{port}/echo",
            headers={
                "Authorization": "Bearer {{ upper($credentials.derived) }}",
                "X-Part": "{{ slice($credentials.derived, 0, 12) }}",
                "Accept": "application/json",
            },
            allow_private_network=True,
        ),
    )


def test_derived_forms_of_a_credential_in_a_header_are_masked_whole(
    api: httpx.Client, server: Server
):
    assert api.put("/api/credentials/derived", json={"value": SECRET}).status_code == 200
    with echo_server() as echo:
        flow_id = save(api, derived_flow(echo.port), "derived")
        run_id = api.post(f"/api/flows/{flow_id}/runs", json={"message": "go"}).json()["run_id"]
        run = wait_for(api, run_id, "completed", "failed")
    assert run["status"] == "completed", run
    echoed = run["timeline"][1]["outputs"]["response"]["body"]["headers"]
    assert (echoed["Authorization"], echoed["X-Part"]) == ("***", "***")
    assert echoed["Accept"] == "application/json"  # what came from no credential stays
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    answers = json.dumps([run, [f.data for f in frames], api.get("/api/runs").json()])
    for form in (SECRET, SECRET.upper(), SECRET[:12]):
        assert form not in answers
        assert form not in server.log.read_text()


def test_a_credential_in_a_parameter_that_is_not_secret_capable_is_refused(api: httpx.Client):
    document = chain(
        node("start", "chat-start"),
        node("say", "prompt-template", name="Say", template="{{ upper($credentials.derived) }}"),
    )
    response = api.post("/api/flows", json={"name": "leaky", "document": document})
    assert response.status_code == 422
    [issue] = response.json()["error"]["issues"]
    assert issue["code"] == "credential_placement"
    assert (issue["node_id"], issue["field"]) == ("say", "template")
    assert "Say" in issue["message"] and "HTTP Request's `headers`" in issue["message"]


def test_a_credential_the_model_streams_in_two_tokens_is_masked_in_the_stream(
    api: httpx.Client, server: Server, mock_llm: MockLLM
):
    mock_llm.script({"api_key": SPLIT, "default": {"reply": f"the key is {SPLIT} ok"}})
    assert api.put("/api/credentials/split", json={"value": SPLIT}).status_code == 200
    document = chain(
        node("start", "chat-start"),
        node(
            "llm",
            "llm-completion",
            prompt="{{ $json.message }}",
            model="openai-compatible:mock",
            base_url=mock_llm.base_url,
            api_key="{{ $credentials.split }}",
        ),
    )
    flow_id = save(api, document, "split stream")
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.token, max_retries=0) as client:
        chunks = list(
            client.chat.completions.create(
                model=flow_id, messages=[{"role": "user", "content": "key?"}], stream=True
            )
        )
    deltas = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(deltas) > 2  # streamed token by token
    assert "".join(deltas) == "the key is *** ok"
    assert not any(part in delta for delta in deltas for part in SPLIT.split())
    assert len(mock_llm.requests) == 1  # the model got the real key: the script requires it
