"""The HTTP Request node against a real HTTP server on 127.0.0.1.

127.0.0.1 is a loopback address, which the node refuses unless `allow_private_network`
is on: most tests turn it on; the guard's own tests are in tests/net.
"""

from __future__ import annotations

import ast
import email
import email.policy
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import nodeloom.nodes.integration.http_request.definition as definition_module
from nodeloom.errors import NodeError
from nodeloom.net import ENV_ALLOW_PRIVATE, NetworkPolicyError, StaticResolver
from nodeloom.nodes.integration.http_request.definition import check_request, definition
from nodeloom.nodes.integration.http_request.executor import (
    MAX_RESPONSE_BYTES,
    HttpRequestExecutor,
    executor,
)
from nodeloom.testing.context import call_executor

SECRET = "Bearer s3cret-token"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 100


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        arg = {key: values[-1] for key, values in query.items()}
        self.server.seen.append(parts.path)
        path = parts.path
        if path == "/echo":
            echo = {
                "method": self.command,
                "query": query,
                "headers": {name.lower(): value for name, value in self.headers.items()},
                "body": body.decode(),
            }
            self._send(200, json.dumps(echo).encode(), "application/json")
        elif path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
            self._send(status, b'{"message": "no such item"}', "application/json")
        elif path == "/text":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/bad-json":
            self._send(200, b"{not json", "application/json")
        elif path == "/problem":
            self._send(422, b'{"title": "invalid"}', "application/problem+json")
        elif path == "/redirect":
            self._send(int(arg.get("status", "302")), b"", "text/plain", {"Location": arg["to"]})
        elif path == "/loop":
            self._send(302, b"", "text/plain", {"Location": "/loop"})
        elif path == "/slow":
            self.server.release.wait(float(arg["seconds"]))
            self._send(200, b"late", "text/plain")
        elif path == "/big":
            self._send_big(int(arg["size"]))
        elif path == "/logo":
            disposition = {"Content-Disposition": 'attachment; filename="logo.png"'}
            self._send(200, PNG, "image/png", disposition)
        elif path == "/form":
            self._send(
                200, json.dumps(_form_fields(self.headers, body)).encode(), "application/json"
            )
        elif path == "/sha":
            digest = {
                "sha256": hashlib.sha256(body).hexdigest(),
                "type": self.headers["Content-Type"],
            }
            self._send(200, json.dumps(digest).encode(), "application/json")
        else:
            self._send(404, b"not found", "text/plain")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("X-Custom", "Yes")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except OSError:  # the client gave up (a timeout test)
            self.close_connection = True

    def _send_big(self, size: int) -> None:
        """`size` bytes, chunked: no Content-Length warns the client in advance."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        block = b"x" * 65536
        sent = 0
        try:
            while sent < size:
                piece = block[: min(len(block), size - sent)]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                sent += len(piece)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client stopped reading past its limit
            self.close_connection = True


def _form_fields(headers: Any, body: bytes) -> dict[str, Any]:
    """A multipart/form-data body, parsed by the standard library's email parser."""
    head = f"Content-Type: {headers['Content-Type']}\r\n\r\n".encode()
    message = email.message_from_bytes(head + body, policy=email.policy.HTTP)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if part.get_filename():
            data = part.get_payload(decode=True)
            fields[name] = {
                "filename": part.get_filename(),
                "type": part.get_content_type(),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        else:
            fields[name] = part.get_payload(decode=True).decode()
    return fields


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[str] = []
        self.release = threading.Event()
        self.port = self.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _run(data: dict[str, Any], node: HttpRequestExecutor = executor) -> dict[str, Any]:
    result, _events = await call_executor(node, {"allow_private_network": True, **data})
    return result.outputs


# --- the definition ------------------------------------------------------------------


def test_the_definition_keeps_its_public_contract() -> None:
    assert (definition.id, definition.name, definition.category) == (
        "http-request",
        "HTTP Request",
        "integration",
    )
    assert (definition.execution_mode, definition.side_effects, definition.icon) == (
        "flow",
        "external",
        "Globe",
    )
    assert [(p.id, p.socket, p.required) for p in definition.inputs] == [("input", "data", False)]
    assert [(p.id, p.socket) for p in definition.outputs] == [
        ("response", "data"),
        ("status", "int"),
        ("error", "data"),
    ]
    assert definition.main_port == "response"
    parameters = {p.id: p for p in definition.parameters}
    assert list(parameters) == [
        "method",
        "url",
        "headers",
        "query",
        "body",
        "timeout",
        "allow_private_network",
        "follow_redirects",
        "multipart",
    ]
    method = parameters["method"]
    assert (method.type, method.default) == ("enum", "GET")
    assert method.options == ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
    url = parameters["url"]
    assert (url.type, url.required, url.hybrid, url.socket_type) == ("string", True, True, "string")
    assert (parameters["headers"].type, parameters["headers"].default) == ("json", {})
    assert (parameters["query"].type, parameters["query"].default) == ("json", {})
    body = parameters["body"]
    assert (body.type, body.hybrid, body.socket_type, body.default) == ("json", True, "json", None)
    timeout = parameters["timeout"]
    assert (timeout.type, timeout.default, timeout.minimum, timeout.maximum) == (
        "number",
        30,
        0.1,
        300,
    )
    allow_private = parameters["allow_private_network"]
    assert (allow_private.type, allow_private.default) == ("boolean", False)
    assert (parameters["follow_redirects"].type, parameters["follow_redirects"].default) == (
        "boolean",
        True,
    )
    assert executor.node_type == definition.id


def test_the_definition_imports_no_network_code() -> None:
    tree = ast.parse(Path(definition_module.__file__).read_text())
    imported: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert not {name for name in imported if name and ("httpx" in name or "nodeloom.net" in name)}


def test_the_definition_check_catches_what_the_generic_check_cannot() -> None:
    assert check_request({"url": "https://api.example.com", "headers": {}, "query": {}}) == []
    assert check_request({"url": "{{ $json.next }}", "headers": "{{ $json.h }}"}) == []
    assert check_request({"url": "api.example.com/items", "headers": ["a"], "query": 3}) == [
        ("url", "url must start with http:// or https://, e.g. https://api.example.com/items"),
        ("headers", 'headers must be a JSON object such as {"Accept": "application/json"}'),
        ("query", 'query must be a JSON object such as {"page": 2}'),
    ]


# --- answers -------------------------------------------------------------------------


async def test_a_json_answer_goes_out_on_response_and_status(server: _Server) -> None:
    outputs = await _run({"url": server.url("/echo")})
    assert set(outputs) == {"response", "status"}
    assert outputs["status"] == 200
    response = outputs["response"]
    assert response["status"] == 200
    assert response["headers"]["content-type"] == "application/json"
    assert response["headers"]["x-custom"] == "Yes"  # names lower-cased
    assert response["body"]["method"] == "GET"


@pytest.mark.parametrize("body", [{"name": "Ada", "tags": ["x"]}, [1, 2, 3], 42, True])
async def test_a_json_body_is_sent_as_json(server: _Server, body: Any) -> None:
    outputs = await _run({"method": "POST", "url": server.url("/echo"), "body": body})
    echo = outputs["response"]["body"]
    assert echo["method"] == "POST"
    assert json.loads(echo["body"]) == body
    assert echo["headers"]["content-type"] == "application/json"


async def test_a_text_body_is_sent_as_text(server: _Server) -> None:
    outputs = await _run({"method": "PUT", "url": server.url("/echo"), "body": "héllo"})
    echo = outputs["response"]["body"]
    assert echo["body"] == "héllo"
    assert echo["headers"]["content-type"] == "text/plain; charset=utf-8"


async def test_a_content_type_header_wins_over_the_default(server: _Server) -> None:
    outputs = await _run(
        {
            "method": "POST",
            "url": server.url("/echo"),
            "headers": {"content-type": "application/x-www-form-urlencoded"},
            "body": "a=1&b=2",
        }
    )
    echo = outputs["response"]["body"]
    assert echo["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert echo["body"] == "a=1&b=2"


async def test_headers_and_query_are_sent(server: _Server) -> None:
    outputs = await _run(
        {
            "url": server.url("/echo?fixed=1"),
            "headers": {"Authorization": SECRET, "X-Count": 3, "X-Empty": None},
            "query": {"page": 2, "tag": ["a", "b"], "flag": True},
        }
    )
    echo = outputs["response"]["body"]
    assert echo["headers"]["authorization"] == SECRET
    assert echo["headers"]["x-count"] == "3"
    assert "x-empty" not in echo["headers"]
    assert echo["query"] == {"fixed": ["1"], "page": ["2"], "tag": ["a", "b"], "flag": ["true"]}


@pytest.mark.parametrize("status", [404, 500])
async def test_a_4xx_or_5xx_answer_goes_out_on_error(server: _Server, status: int) -> None:
    outputs = await _run({"url": server.url(f"/status/{status}")})
    assert set(outputs) == {"error", "status"}
    assert outputs["status"] == status
    assert outputs["error"]["status"] == status
    assert outputs["error"]["body"] == {"message": "no such item"}
    assert outputs["error"]["headers"]["x-custom"] == "Yes"


async def test_text_is_decoded_with_the_declared_charset(server: _Server) -> None:
    outputs = await _run({"url": server.url("/text")})
    assert outputs["response"]["body"] == "café"


async def test_invalid_json_comes_back_as_text(server: _Server) -> None:
    outputs = await _run({"url": server.url("/bad-json")})
    assert outputs["response"]["body"] == "{not json"


async def test_json_variants_are_parsed(server: _Server) -> None:
    outputs = await _run({"url": server.url("/problem")})
    assert outputs["error"]["body"] == {"title": "invalid"}


async def test_head_has_an_empty_body(server: _Server) -> None:
    outputs = await _run({"method": "HEAD", "url": server.url("/echo")})
    assert outputs["response"]["body"] == ""
    assert outputs["status"] == 200


async def test_redirects_are_followed(server: _Server) -> None:
    outputs = await _run({"url": server.url("/redirect?to=/echo")})
    assert outputs["status"] == 200
    assert outputs["response"]["body"]["method"] == "GET"


async def test_without_following_a_redirect_is_the_response(server: _Server) -> None:
    outputs = await _run({"url": server.url("/redirect?to=/echo"), "follow_redirects": False})
    assert outputs["status"] == 302
    assert outputs["response"]["headers"]["location"] == "/echo"
    assert server.seen == ["/redirect"]


async def test_a_redirect_loop_fails_clearly(server: _Server) -> None:
    with pytest.raises(NodeError, match="redirected more than 5 times") as caught:
        await _run({"url": server.url("/loop")})
    assert caught.value.code == "too_many_redirects"


# --- the guard -----------------------------------------------------------------------


async def test_a_private_destination_is_refused_unless_allowed(server: _Server) -> None:
    with pytest.raises(NetworkPolicyError) as caught:
        await _run({"url": server.url("/echo"), "allow_private_network": False})
    error = caught.value
    assert (error.code, error.retryable) == ("ssrf_blocked", False)
    assert str(error) == (
        f"refused to connect to 127.0.0.1 (loopback address) for {server.url('/echo')}: "
        "private, loopback and link-local destinations are blocked. Set "
        "allow_private_network: true on the node or NODELOOM_ALLOW_PRIVATE_NETWORK=1 to "
        "allow them"
    )
    assert server.seen == []


async def test_a_name_resolving_to_a_private_address_is_refused() -> None:
    node = HttpRequestExecutor(resolver=StaticResolver({"evil.example": "10.0.0.5"}))
    with pytest.raises(NetworkPolicyError, match=r"evil\.example"):
        await _run({"url": "http://evil.example/", "allow_private_network": False}, node)


async def test_the_environment_variable_allows_private_destinations(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "1")
    outputs = await _run({"url": server.url("/echo"), "allow_private_network": False})
    assert outputs["status"] == 200


async def test_the_request_keeps_the_name_it_was_given(server: _Server) -> None:
    node = HttpRequestExecutor(resolver=StaticResolver({"svc.test": "127.0.0.1"}))
    outputs = await _run({"url": f"http://svc.test:{server.port}/echo"}, node)
    assert outputs["response"]["body"]["headers"]["host"] == f"svc.test:{server.port}"


# --- failures ------------------------------------------------------------------------


async def test_a_refused_connection_is_a_retryable_http_error() -> None:
    port = _closed_port()
    with pytest.raises(NodeError) as caught:
        await _run(
            {
                "method": "POST",
                "url": f"http://127.0.0.1:{port}/items?api_key=hidden-key",
                "headers": {"Authorization": SECRET},
            }
        )
    error = caught.value
    assert (error.code, error.retryable) == ("http_error", True)
    message = str(error)
    assert message.startswith(f"POST http://127.0.0.1:{port}/items?… failed: ")
    assert SECRET not in message
    assert "hidden-key" not in message


async def test_a_name_that_does_not_resolve_is_an_http_error() -> None:
    node = HttpRequestExecutor(resolver=StaticResolver({}))
    with pytest.raises(NodeError, match=r"could not resolve nowhere\.example") as caught:
        await _run({"url": "https://nowhere.example/"}, node)
    assert caught.value.code == "http_error"


async def test_a_slow_server_times_out(server: _Server) -> None:
    with pytest.raises(NodeError, match=r"GET .*/slow\?… failed: .*0\.2") as caught:
        await _run({"url": server.url("/slow?seconds=5"), "timeout": 0.2})
    assert (caught.value.code, caught.value.retryable) == ("http_error", True)


async def test_a_body_over_10_mb_is_refused_while_streaming(server: _Server) -> None:
    with pytest.raises(NodeError, match="larger than 10 MB") as caught:
        await _run({"url": server.url(f"/big?size={MAX_RESPONSE_BYTES + 1}")})
    assert (caught.value.code, caught.value.retryable) == ("http_response_too_large", False)


async def test_a_body_of_exactly_the_limit_is_read(server: _Server) -> None:
    node = HttpRequestExecutor(max_response_bytes=200_000)
    outputs = await _run({"url": server.url("/big?size=200000")}, node)
    assert len(outputs["response"]["body"]) == 200_000


# --- parameters ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"method": "FETCH"}, "method", "method must be one of GET, POST, PUT, PATCH, DELETE"),
        ({"url": ""}, "url", "url is required"),
        ({"url": None}, "url", "url is required"),
        ({"headers": ["Accept"]}, "headers", "headers must be an object"),
        ({"headers": {"bad name": "x"}}, "headers", "header name 'bad name' is not valid"),
        ({"headers": {"X-Obj": {"a": 1}}}, "headers", "header 'X-Obj' must have a text value"),
        ({"query": "page=2"}, "query", "query must be an object"),
        ({"query": {"filter": {"a": 1}}}, "query", "query parameter 'filter' must be text"),
        ({"body": {"x": float("nan")}}, "body", "body cannot be sent as JSON"),
        ({"timeout": 0}, "timeout", "timeout must be between 0.1 and 300 seconds"),
        ({"timeout": 301}, "timeout", "timeout must be between 0.1 and 300 seconds"),
        ({"timeout": "30"}, "timeout", "timeout is a number of seconds"),
        ({"allow_private_network": "yes"}, "allow_private_network", "must be true or false"),
    ],
)
async def test_bad_parameters_are_named(data: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(NodeError, match=message) as caught:
        await _run({"url": "https://api.example.com/", **data})
    assert (caught.value.code, caught.value.retryable) == ("invalid_parameter", False)
    assert caught.value.details["field"] == field


async def test_a_header_value_never_appears_in_a_message() -> None:
    with pytest.raises(NodeError, match="'Authorization' has a line break") as caught:
        await _run({"url": "https://api.example.com/", "headers": {"Authorization": SECRET + "\n"}})
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("url", ["ftp://example.com/file", "example.com/items"])
async def test_only_http_and_https_urls_are_requested(url: str) -> None:
    with pytest.raises(NodeError, match=r"not an http:// or https:// URL") as caught:
        await _run({"url": url})
    assert (caught.value.code, caught.value.retryable) == ("invalid_url", False)


# --- binary content ----------------------------------------------------------------


@pytest.fixture
def files_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    monkeypatch.setenv("NODELOOM_FILES_ROOT", str(root))
    return root


async def test_a_binary_answer_is_kept_as_a_file_and_never_decoded(
    server: _Server, files_root: Path
) -> None:
    outputs = await _run({"url": server.url("/logo")})
    sha = hashlib.sha256(PNG).hexdigest()
    assert outputs["response"]["body"] == {
        "$ref": f"file:downloads/{sha}/logo.png",
        "mime": "image/png",
        "size": len(PNG),
        "name": "logo.png",
    }
    assert (files_root / "downloads" / sha / "logo.png").read_bytes() == PNG
    assert [p.name for p in (files_root / "downloads").iterdir()] == [sha]  # no staging left


async def test_a_binary_answer_over_the_download_limit_leaves_no_file(
    server: _Server, files_root: Path
) -> None:
    node = HttpRequestExecutor(max_download_bytes=100_000)
    with pytest.raises(NodeError) as caught:
        await _run({"url": server.url("/big?size=300000")}, node)
    assert caught.value.code == "http_response_too_large"
    assert list((files_root / "downloads").iterdir()) == []


async def test_a_file_reference_as_body_sends_the_files_bytes_with_its_type(
    server: _Server, files_root: Path
) -> None:
    (files_root / "logo.png").write_bytes(PNG)
    ref = {"$ref": "file:logo.png", "mime": "image/png", "size": len(PNG), "name": "logo.png"}
    outputs = await _run({"method": "POST", "url": server.url("/sha"), "body": ref})
    assert outputs["response"]["body"] == {
        "sha256": hashlib.sha256(PNG).hexdigest(),
        "type": "image/png",
    }


async def test_a_file_reference_outside_the_root_is_not_sent(
    server: _Server, files_root: Path
) -> None:
    ref = {"$ref": "file:../secret", "mime": "text/plain", "size": 1}
    with pytest.raises(NodeError) as caught:
        await _run({"method": "POST", "url": server.url("/sha"), "body": ref})
    assert caught.value.code == "path_outside_root"
    assert server.seen == []


async def test_multipart_sends_text_fields_and_file_references_as_file_parts(
    server: _Server, files_root: Path
) -> None:
    (files_root / "logo.png").write_bytes(PNG)
    ref = {"$ref": "file:logo.png", "mime": "image/png", "size": len(PNG), "name": "logo.png"}
    data = {
        "method": "POST",
        "url": server.url("/form"),
        "multipart": True,
        "body": {"note": 'a "quoted" note', "count": 3, "file": ref},
    }
    outputs = await _run(data)
    assert outputs["response"]["body"] == {
        "note": 'a "quoted" note',
        "count": "3",
        "file": {
            "filename": "logo.png",
            "type": "image/png",
            "sha256": hashlib.sha256(PNG).hexdigest(),
        },
    }


async def test_multipart_needs_an_object_of_fields(server: _Server) -> None:
    with pytest.raises(NodeError) as caught:
        await _run({"method": "POST", "url": server.url("/form"), "multipart": True, "body": "x"})
    assert caught.value.details == {"field": "body"}
    assert server.seen == []
