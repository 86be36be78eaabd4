"""`nodeloom run --record` then `--replay`: an agent's model calls with a tool call and an
HTTP Request, recorded against real local servers, replayed with those servers gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

SECRET = "sk-cassette-secret-7c1e55"
TOKEN = "tok-query-secret-99a1b2"

SCRIPT = [
    {
        "match": {"tools": ["add"], "tool_result": False},
        "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
    },
    {"match": {"tool_result": "add"}, "reply": "The sum is {tool_result}."},
]


class Echo:
    """A local HTTP service that counts its calls: a replay that reached it would show."""

    def __init__(self) -> None:
        self.calls = 0
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                echo.calls += 1
                query = parse_qs(urlsplit(self.path).query)
                body = json.dumps({"echo": query.get("q", [""])[0], "call": echo.calls}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def flow(server: str) -> dict:
    return {
        "name": "Sum and look up",
        "variables": {"server": server},
        "nodes": [
            {"id": "start", "type": "chat-start", "data": {"name": "Chat Start"}},
            {
                "id": "helper",
                "type": "agent",
                "data": {
                    "name": "Helper",
                    "model": "openai:gpt-4o-mini",
                    "instructions": "Use the calculator.",
                },
            },
            {
                "id": "tools",
                "type": "toolset",
                "data": {"name": "Maths", "toolsets": ["calculator"]},
            },
            {
                "id": "lookup",
                "type": "http-request",
                "data": {
                    "name": "Lookup",
                    "url": "{{ $vars.server }}/echo",
                    "query": {"q": "{{ $json.response }}", "token": TOKEN},
                    "headers": {"Authorization": f"Bearer {SECRET}"},
                    "allow_private_network": True,
                },
            },
        ],
        "edges": [
            {"id": "e1", "source": "start", "target": "helper"},
            {
                "id": "e2",
                "source": "tools",
                "sourceHandle": "tools",
                "target": "helper",
                "targetHandle": "tools",
            },
            {"id": "e3", "source": "helper", "target": "lookup"},
        ],
    }


def nodeloom_run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "nodeloom"), "run", *args, "--json", "--ephemeral"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def result_of(done: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_recorded_agent_run_replays_with_identical_outputs_and_no_network(tmp_path, mock_llm):
    mock_llm.script(SCRIPT)
    echo = Echo()
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow(echo.url)), encoding="utf-8")
    cassette = tmp_path / "run.cassette.json"
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": mock_llm.base_url}

    recorded = nodeloom_run(str(path), "--input", "add 2 and 3", "--record", str(cassette), env=env)
    assert recorded.returncode == 0, recorded.stdout[-2000:] + recorded.stderr[-2000:]
    assert echo.calls == 1 and len(mock_llm.requests) == 2
    echo.stop()
    mock_llm.stop()  # nothing listens any more: a replay that used the network would fail

    env.pop("OPENAI_API_KEY")  # a replay needs no provider key
    replayed = nodeloom_run(str(path), "--input", "add 2 and 3", "--replay", str(cassette), env=env)
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
    first, second = result_of(recorded), result_of(replayed)
    assert first["outputs"] == second["outputs"]
    assert second["outputs"]["Lookup"]["response"]["body"]["call"] == 1
    assert "The sum is" in second["outputs"]["Helper"]["output"]["response"]
    tools = [
        json.loads(line)["data"]["tool"]
        for line in replayed.stdout.splitlines()
        if '"ToolCallStarted"' in line
    ]
    assert tools == ["add"]

    text = cassette.read_text(encoding="utf-8")
    assert SECRET not in text and TOKEN not in text
    interactions = json.loads(text)["interactions"]
    assert [i["request"]["method"] for i in interactions] == ["POST", "POST", "GET"]
    assert "authorization" not in interactions[0]["request"]["headers"]
    assert "token=REDACTED" in interactions[2]["request"]["url"]


@pytest.mark.slow
def test_a_request_the_cassette_does_not_hold_fails_the_run_naming_it(tmp_path, mock_llm):
    mock_llm.script(SCRIPT)
    echo = Echo()
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow(echo.url)), encoding="utf-8")
    cassette = tmp_path / "run.cassette.json"
    env = {**os.environ, "OPENAI_BASE_URL": mock_llm.base_url}
    assert (
        nodeloom_run(
            str(path), "--input", "add 2 and 3", "--record", str(cassette), env=env
        ).returncode
        == 0
    )
    echo.stop()
    requests = len(mock_llm.requests)

    replayed = nodeloom_run(str(path), "--input", "add 4 and 5", "--replay", str(cassette), env=env)
    assert replayed.returncode == 1
    error = result_of(replayed)["error"]
    assert error["code"] == "cassette_miss"
    assert f"POST {mock_llm.base_url}/chat/completions" in error["message"]
    assert len(mock_llm.requests) == requests  # the live mock was never asked


def test_a_missing_cassette_is_invalid_input(tmp_path):
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow("http://127.0.0.1:1")), encoding="utf-8")
    done = nodeloom_run(str(path), "--replay", str(tmp_path / "none.json"), env={**os.environ})
    assert done.returncode == 2
    assert "cannot read the cassette" in done.stdout


def test_credentials_are_removed_from_what_a_cassette_keeps(monkeypatch):
    import httpx

    from nodeloom.cassettes.format import interaction

    monkeypatch.setenv("SHOP_API_KEY", "shop-key-123456")
    request = httpx.Request(
        "POST",
        f"https://api.example.com/v1/x?api_key={TOKEN}&page=2",
        headers={"Authorization": f"Bearer {SECRET}", "X-Auth-Token": "hdr-secret-1"},
        json={"note": f"key {SECRET} and shop-key-123456 and hdr-secret-1"},
    )
    response = httpx.Response(200, headers={"Set-Cookie": "sid=cookie-secret-42"}, text="ok")
    kept = json.dumps(interaction(request, request.read(), response))
    for secret in (SECRET, TOKEN, "shop-key-123456", "hdr-secret-1", "cookie-secret-42"):
        assert secret not in kept
    assert "page=2" in kept and '"set-cookie": "REDACTED"' in kept


def test_a_replay_needs_no_dns_for_the_recorded_hosts(tmp_path):
    """`.invalid` never resolves: only a replay that skips the network guard's look-up
    can answer an HTTP Request to it."""
    import httpx

    from nodeloom.cassettes.format import interaction, write

    url = "http://api.example.invalid/echo?q=hi"
    request = httpx.Request("GET", url, headers={"Host": "api.example.invalid"})
    response = httpx.Response(200, json={"echo": "hi"})
    response.read()
    write(tmp_path / "c.json", [interaction(request, b"", response)])
    graph = {
        "nodes": [
            {"id": "start", "type": "chat-start", "data": {}},
            {"id": "get", "type": "http-request", "data": {"name": "Get", "url": url}},
        ],
        "edges": [{"id": "e", "source": "start", "target": "get"}],
    }
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(graph), encoding="utf-8")
    done = nodeloom_run(str(path), "--replay", str(tmp_path / "c.json"), env={**os.environ})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert result_of(done)["outputs"]["Get"]["response"]["body"] == {"echo": "hi"}
