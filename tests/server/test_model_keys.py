"""Provider keys go only to their provider, through the real server: a flow whose LLM node
points `base_url` at another host never sends it the server's OPENAI_API_KEY (it needs a
credential of its own), and a base_url on a private network is refused unless the
operator allows it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.testing.builders import chain, node

from .conftest import Server, serving
from .test_runs import save, wait_for

SERVER_KEY = "sk-server-key-never-leaves-7f3a"
NODE_KEY = "sk-the-capture-hosts-own-key-19"


class Capture(ThreadingHTTPServer):
    """A chat-completions endpoint on loopback that records the headers it receives and
    streams the reply "captured"."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.headers_seen: list[dict[str, str]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: Capture

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        frames = [
            {**chunk, "choices": [{"index": 0, "delta": {"content": "captured"}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())


@pytest.fixture
def capture() -> Iterator[Capture]:
    server = Capture()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the operator's OpenAI key, allowing private networks (the capture
    endpoint is on loopback)."""
    yield from serving(tmp_path_factory, {"OPENAI_API_KEY": SERVER_KEY, ENV_ALLOW_PRIVATE: "1"})


def llm_flow(base_url: str, **data: Any) -> dict[str, Any]:
    return chain(
        node("start", "chat-start"),
        node("llm", "llm-completion", name="Writer", model="openai:m", base_url=base_url, **data),
    )


def run(api: httpx.Client, document: dict[str, Any]) -> dict[str, Any]:
    flow_id = save(api, document, "model keys")
    started = api.post(f"/api/flows/{flow_id}/runs", json={"message": "hi"})
    assert started.status_code == 202, started.text
    return wait_for(api, started.json()["run_id"], "completed", "failed")


def test_a_graph_set_base_url_never_receives_the_servers_key(keyed: Server, capture: Capture):
    failed = run(keyed.client(), llm_flow(capture.base_url))
    assert failed["status"] == "failed"
    error = failed["error"]
    assert error["code"] == "model_not_configured" and error["node_id"] == "llm"
    assert "OPENAI_API_KEY" in error["message"] and "$credentials" in error["message"]
    assert capture.headers_seen == []
    assert SERVER_KEY not in json.dumps(failed)


def test_a_graph_set_base_url_works_with_a_credential_of_its_own(keyed: Server, capture: Capture):
    api = keyed.client()
    assert api.put("/api/credentials/capture_key", json={"value": NODE_KEY}).status_code == 200
    done = run(api, llm_flow(capture.base_url, api_key="{{ $credentials.capture_key }}"))
    assert done["status"] == "completed", done["error"]
    assert done["timeline"][1]["outputs"]["output"]["text"] == "captured"
    (headers,) = capture.headers_seen
    assert headers["authorization"] == f"Bearer {NODE_KEY}"
    assert SERVER_KEY not in json.dumps(capture.headers_seen)


def test_the_environment_key_is_refused_at_another_host_however_it_got_into_the_request(
    keyed: Server, capture: Capture
):
    """An SDK reading the environment itself, an Ethan `{{env.OPENAI_API_KEY}}`: here the
    node names the key's value; the model client's transport refuses to send it."""
    document = llm_flow(capture.base_url, api_key=SERVER_KEY)
    failed = run(keyed.client(), document)
    assert failed["status"] == "failed", failed
    assert "refused to send OPENAI_API_KEY" in failed["error"]["message"]
    assert capture.headers_seen == []


def test_a_private_base_url_is_refused_unless_the_operator_allows_it(
    server: Server, capture: Capture
):
    api = server.client()
    assert api.put("/api/credentials/capture_key", json={"value": NODE_KEY}).status_code == 200
    failed = run(api, llm_flow(capture.base_url, api_key="{{ $credentials.capture_key }}"))
    assert failed["status"] == "failed"
    error = failed["error"]
    assert error["code"] == "ssrf_blocked" and error["node_id"] == "llm", error
    assert ENV_ALLOW_PRIVATE in error["message"]
    assert capture.headers_seen == []
