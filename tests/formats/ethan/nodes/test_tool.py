"""ethan-tool: Python functions, HTTP requests and MCP tools, called for real."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ARITH = Path(__file__).parents[3] / "nodes" / "tools" / "mcp_servers" / "arith_server.py"

TOOLS = """
import asyncio
import time

CALLS = []


def add(a, b=0):
    return {"json": {"sum": a + b}, "text": str(a + b)}


def plain(word):
    return word.upper()


async def later(word):
    await asyncio.sleep(0)
    return [word, word]


def broken():
    raise RuntimeError("the disk is full")


def refuse():
    CALLS.append(1)
    return {"status": 503, "error": {"message": "try later", "type": "upstream"}}


def nap(seconds):
    time.sleep(seconds)
    return "woke"
"""


@pytest.fixture(autouse=True)
def tools_file(ethan):
    (ethan.folder / "tools.py").write_text(TOOLS)


def graph(impl: str, inputs: str, extra: str = "") -> str:
    return f"""
        tools:
          - {{id: t, kind: python, impl: "{impl}", config: {{b: 10}}}}
        graph:
          nodes:
            - id: call
              type: tool
              uses: t
              inputs: {inputs}
              {extra}
              map: {{set: {{out: "{{{{ result }}}}"}}}}
    """


async def test_a_python_file_function_gets_config_defaults_and_rendered_inputs(ethan):
    result, _ = await ethan.run(graph("tools.py#add", "{a: 2}"))
    assert result.status == "completed", result.error
    assert result.state["out"] == {
        "status": 200,
        "json": {"sum": 12},
        "text": "12",
        "items": None,
        "result": None,
        "error": None,
    }


@pytest.mark.parametrize(
    ("impl", "inputs", "key", "value"),
    [
        ("tools.py#plain", "{word: hi}", "text", "HI"),
        ("tools.py#later", "{word: hi}", "items", ["hi", "hi"]),
    ],
)
async def test_return_values_are_normalized(ethan, impl, inputs, key, value):
    text = graph(impl, inputs).replace("config: {b: 10}", "config: {}")
    result, _ = await ethan.run(text)
    assert result.state["out"][key] == value
    assert result.state["out"]["status"] == 200


async def test_a_module_function_is_imported_from_the_working_directory(ethan, monkeypatch):
    package = ethan.folder / "work"
    package.mkdir()
    (package / "mytools.py").write_text("def shout(word):\n    return word + '!'\n")
    monkeypatch.chdir(package)
    text = graph("mytools:shout", "{word: hey}").replace("config: {b: 10}", "config: {}")
    result, _ = await ethan.run(text)
    assert result.state["out"]["text"] == "hey!"


async def test_an_error_result_fails_the_node_and_is_retried(ethan):
    text = graph("tools.py#refuse", "{}", "retry: {max_attempts: 3, backoff: 0}")
    text = text.replace("config: {b: 10}", "config: {}")
    result, events = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "tool_error"
    assert result.error["node_id"] == "call"
    assert result.error["tool"] == "t"
    assert (
        "tool node 'call' (tool 't'): the tool returned an error: try later"
        in (result.error["message"])
    )
    retries = [e for e in events if e.event_type == "progress"]
    assert len(retries) == 2
    assert next(e for e in events if e.event_type == "error").data["attempts"] == 3


async def test_an_exception_names_the_node_tool_and_cause(ethan):
    result, _ = await ethan.run(
        graph("tools.py#broken", "{}").replace("config: {b: 10}", "config: {}")
    )
    assert result.error["code"] == "node_failed"
    assert "tool node 'call' (tool 't'): RuntimeError: the disk is full" in result.error["message"]
    assert result.error["node_type"] == "ethan-tool"


async def test_wrong_arguments_say_what_the_function_takes(ethan):
    result, _ = await ethan.run(
        graph("tools.py#plain", "{text: hi}").replace("config: {b: 10}", "config: {}")
    )
    assert result.error["code"] == "tool_arguments"
    assert "plain(word)" in result.error["message"]


async def test_a_timeout_is_enforced_on_a_blocking_function(ethan):
    text = graph("tools.py#nap", "{seconds: 1}", "timeout: {seconds: 0.2}")
    text = text.replace("config: {b: 10}", "config: {}")
    result, _ = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "node_timeout"
    assert result.error["node_id"] == "call"


async def test_meta_default_retry_and_timeout_apply_to_tool_nodes(ethan):
    text = graph("tools.py#nap", "{seconds: 0.5}").replace("config: {b: 10}", "config: {}")
    text = (
        "meta:\n  defaults: {retry: {max_attempts: 2, backoff: 0}, timeout: {seconds: 0.1}}\n"
        + (text.replace("\n        ", "\n"))
    )
    result, events = await ethan.run(text)
    assert result.error["code"] == "node_timeout"
    assert next(e for e in events if e.event_type == "error").data["attempts"] == 2


# -- http -----------------------------------------------------------------------------------


@pytest.fixture
def server():
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            status = 503 if self.path.startswith("/busy") else 200
            body = json.dumps({"results": [1, 2], "path": self.path}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.dumps({"got": json.loads(self.rfile.read(length))}).encode()
            self.send_response(201)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.seen = seen  # type: ignore[attr-defined]
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def http_graph(
    url: str, inputs: str, config: str = "{allow_private_network: true}", extra: str = ""
) -> str:
    return f"""
        tools:
          - {{id: web, kind: http, config: {config}}}
        graph:
          nodes:
            - id: fetch
              type: tool
              uses: web
              inputs: {inputs}
              {extra}
              map: {{set: {{out: "{{{{ result }}}}"}}}}
    """


async def test_an_http_get_is_normalized(ethan, server):
    result, _ = await ethan.run(
        http_graph(server.url, f'{{url: "{server.url}/x", params: {{q: a b}}}}')
    )
    out = result.state["out"]
    assert out["status"] == 200
    assert out["json"]["path"] == "/x?q=a+b"
    assert out["items"] == [1, 2]
    assert out["result"] == out["json"]
    assert json.loads(out["text"]) == out["json"]


async def test_an_http_post_sends_json(ethan, server):
    inputs = f'{{method: POST, url: "{server.url}/x", json: {{a: 1}}}}'
    result, _ = await ethan.run(http_graph(server.url, inputs))
    assert result.state["out"]["status"] == 201
    assert result.state["out"]["json"] == {"got": {"a": 1}}


async def test_a_5xx_status_fails_the_node_and_is_retried(ethan, server):
    text = http_graph(
        server.url, f'{{url: "{server.url}/busy"}}', extra="retry: {max_attempts: 2, backoff: 0}"
    )
    result, _ = await ethan.run(text)
    assert result.error["code"] == "tool_error"
    assert "HTTP 503" in result.error["message"]
    assert result.error["result"]["status"] == 503
    assert server.seen == ["/busy", "/busy"]


async def test_private_addresses_are_refused_unless_allowed(ethan, server, monkeypatch):
    monkeypatch.delenv("NODELOOM_ALLOW_PRIVATE_NETWORK", raising=False)
    result, _ = await ethan.run(http_graph(server.url, f'{{url: "{server.url}/x"}}', config="{}"))
    assert result.error["code"] == "ssrf_blocked"
    assert "allow_private_network: true in the tool's config" in result.error["message"]
    assert server.seen == []


# -- mcp ------------------------------------------------------------------------------------


async def test_an_mcp_tool_is_called_on_a_real_server_reused_across_a_loop(ethan, tmp_path):
    starts = tmp_path / "starts"
    server = shlex.join([sys.executable, str(ARITH)])
    command = shlex.join(["sh", "-c", f"echo started >> {shlex.quote(str(starts))}; exec {server}"])
    text = f"""
        state:
          init: {{total: 0}}
        tools:
          - id: adder
            kind: mcp
            impl: mcp://arith
            config:
              command: {json.dumps(command)}
              tool: add
        graph:
          nodes:
            - {{id: thrice, type: loop, body: plus, max_iterations: 3}}
            - id: plus
              type: tool
              uses: adder
              inputs: {{a: "{{{{ state.total }}}}", b: 5}}
              map: {{set: {{total: "{{{{ result.result }}}}", raw: "{{{{ result }}}}"}}}}
    """
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state["total"] == 15
    assert result.state["raw"]["error"] is None
    assert result.state["raw"]["text"] == "15"
    assert result.state["raw"]["json"] == {"result": 15}
    assert starts.read_text().splitlines() == ["started"]  # one server for the 3 calls


async def test_an_mcp_tool_the_server_does_not_offer_is_reported(ethan):
    command = shlex.join([sys.executable, str(ARITH)])
    text = f"""
        tools:
          - {{id: t, kind: mcp, config: {{command: {json.dumps(command)}, tool: multiply}}}}
        graph:
          nodes:
            - {{id: call, type: tool, uses: t, inputs: {{a: 1}}}}
    """
    result, _ = await ethan.run(text)
    assert result.error["code"] == "tool_not_found"
    assert "'multiply'" in result.error["message"]
