"""guarded_stream / guarded_request against real HTTP servers on loopback addresses.

The servers live on 127.0.0.1 (and 127.0.0.2), which the guard refuses by default; tests
reach them with `Policy(allow_private=True)`, with an exempt address
(`Policy(allowed={"127.0.0.1"})`), or with the environment switch, and give them
public-looking names through `StaticResolver`.
"""

from __future__ import annotations

import gzip
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from nodeloom.net import (
    ENV_ALLOW_PRIVATE,
    InvalidURLError,
    NetworkPolicyError,
    Policy,
    ResponseTooLargeError,
    StaticResolver,
    TooManyRedirectsError,
    display_url,
    guarded_request,
    guarded_stream,
    read_body,
)

LOOPBACK_ONLY = Policy(allowed=frozenset({"127.0.0.1"}))
OPEN = Policy(allow_private=True)


class _Handler(BaseHTTPRequestHandler):
    """/echo answers with what it received; /redirect?to=URL&status=N redirects; /loop
    redirects to itself; /big?size=N[&chunked=1] sends N bytes."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        self.server.seen.append(
            {"method": self.command, "path": parts.path, "headers": dict(self.headers)}
        )
        if parts.path == "/redirect":
            self._send(int(query.get("status", "302")), b"", {"Location": query["to"]})
        elif parts.path == "/loop":
            self._send(302, b"", {"Location": "/loop"})
        elif parts.path == "/big":
            self._send_big(int(query["size"]), chunked="chunked" in query)
        elif parts.path == "/gzip":
            packed = gzip.compress(b"0" * int(query["size"]))
            self._send(200, packed, {"Content-Encoding": "gzip"})
        else:
            echo = {
                "method": self.command,
                "path": parts.path,
                "query": query,
                "headers": {name.lower(): value for name, value in self.headers.items()},
                "body": body.decode(),
            }
            self._send(200, json.dumps(echo).encode(), {"Content-Type": "application/json"})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_big(self, size: int, *, chunked: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.command == "HEAD":
            return
        block = b"x" * 65536
        sent = 0
        try:
            while sent < size:
                piece = block[: min(len(block), size - sent)]
                if chunked:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                else:
                    self.wfile.write(piece)
                sent += len(piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client stopped reading, as it should past its limit
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str) -> None:
        super().__init__((host, 0), _Handler)
        self.seen: list[dict[str, Any]] = []
        self.port = self.server_address[1]

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.server_address[0]}:{self.port}{path}"


def _serve(host: str, wrap: ssl.SSLContext | None = None) -> Iterator[_Server]:
    server = _Server(host)
    if wrap is not None:
        server.socket = wrap.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def server() -> Iterator[_Server]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def other_server() -> Iterator[_Server]:
    yield from _serve("127.0.0.2")


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


# --- destinations --------------------------------------------------------------------


async def test_allow_private_reaches_a_loopback_server(server: _Server) -> None:
    response = await guarded_request("GET", server.url("/echo"), policy=OPEN)
    assert response.status_code == 200
    assert response.json()["path"] == "/echo"
    assert response.url == httpx.URL(server.url("/echo"))


async def test_the_default_policy_refuses_a_loopback_server(server: _Server) -> None:
    with pytest.raises(NetworkPolicyError, match=r"127\.0\.0\.1 \(loopback address\)"):
        await guarded_request("GET", server.url("/echo"))
    assert server.seen == []


async def test_a_name_resolving_to_loopback_is_refused(server: _Server) -> None:
    with pytest.raises(NetworkPolicyError, match=r"localhost \(resolves to"):
        await guarded_request("GET", server.url("/echo", host="localhost"))
    assert server.seen == []


async def test_an_injected_name_resolving_to_a_private_address_is_refused() -> None:
    resolver = StaticResolver({"evil.example": "10.0.0.5"})
    with pytest.raises(NetworkPolicyError, match=r"resolves to 10\.0\.0\.5, a private address"):
        await guarded_request("GET", "http://evil.example/", resolver=resolver)


async def test_the_environment_variable_opens_private_destinations(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "1")
    response = await guarded_request("GET", server.url("/echo"))
    assert response.status_code == 200


async def test_query_parameters_are_merged_into_the_url(server: _Server) -> None:
    response = await guarded_request(
        "GET", server.url("/echo?a=1"), params={"b": "2"}, policy=LOOPBACK_ONLY
    )
    assert response.json()["query"] == {"a": "1", "b": "2"}


# --- pinning -------------------------------------------------------------------------


async def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    server: _Server,
) -> None:
    # svc.test exists only in this resolver: if anything but the pinned address were
    # used, the name would be looked up again and the request would fail.
    resolver = StaticResolver({"svc.test": "127.0.0.1"})
    url = f"http://svc.test:{server.port}/echo"
    response = await guarded_request("GET", url, policy=OPEN, resolver=resolver)
    assert response.json()["headers"]["host"] == f"svc.test:{server.port}"
    assert resolver.queries == [("svc.test", server.port)]
    assert response.url == httpx.URL(url)


async def test_a_refused_address_falls_through_to_the_next_checked_one(server: _Server) -> None:
    # Nothing listens on 127.0.0.3 at this port: the connection is refused there.
    resolver = StaticResolver({"svc.test": ["127.0.0.3", "127.0.0.1"]})
    response = await guarded_request(
        "GET", f"http://svc.test:{server.port}/echo", policy=OPEN, resolver=resolver
    )
    assert response.status_code == 200


async def test_https_keeps_the_name_for_sni_and_the_certificate(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=svc.test",
         "-addext", "subjectAltName=DNS:svc.test"],
        check=True, capture_output=True,
    )  # fmt: skip
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    names: list[str | None] = []
    server_context.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,misc]
    client_context = ssl.create_default_context(cafile=str(cert))
    served = _serve("127.0.0.1", wrap=server_context)
    tls_server = next(served)
    try:
        async with httpx.AsyncHTTPTransport(verify=client_context) as transport:
            response = await guarded_request(
                "GET",
                f"https://svc.test:{tls_server.port}/echo",
                policy=OPEN,
                resolver=StaticResolver({"svc.test": "127.0.0.1"}),
                transport=transport,
            )
            assert response.json()["headers"]["host"] == f"svc.test:{tls_server.port}"
            assert names == ["svc.test"]
            # The certificate names svc.test, not the address: asking for it by another
            # name fails verification, so the check really uses the name. The transport
            # is shared, yet the verified connection to the same address is not reused.
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await guarded_request(
                    "GET",
                    f"https://other.test:{tls_server.port}/echo",
                    policy=OPEN,
                    resolver=StaticResolver({"other.test": "127.0.0.1"}),
                    transport=transport,
                )
            assert names == ["svc.test", "other.test"]
    finally:
        next(served, None)


# --- redirects -----------------------------------------------------------------------


async def test_a_redirect_to_another_loopback_address_is_refused_before_connecting(
    server: _Server, other_server: _Server
) -> None:
    target = other_server.url("/echo")
    with pytest.raises(NetworkPolicyError, match=r"127\.0\.0\.2 \(loopback address\)"):
        await guarded_request("GET", server.url(f"/redirect?to={target}"), policy=LOOPBACK_ONLY)
    assert [hit["path"] for hit in server.seen] == ["/redirect"]
    assert other_server.seen == []


async def test_a_redirect_to_cloud_metadata_is_refused(server: _Server) -> None:
    with pytest.raises(NetworkPolicyError) as caught:
        await guarded_request(
            "GET",
            server.url("/redirect?to=http://169.254.169.254/latest/meta-data"),
            policy=LOOPBACK_ONLY,
        )
    assert "169.254.169.254 (link-local address) for http://169.254.169.254/latest" in str(
        caught.value
    )


async def test_a_redirect_to_a_name_resolving_to_a_private_address_is_refused(
    server: _Server,
) -> None:
    resolver = StaticResolver({"public.example": "127.0.0.1", "internal.example": "10.0.0.5"})
    with pytest.raises(NetworkPolicyError, match=r"internal\.example"):
        await guarded_request(
            "GET",
            f"http://public.example:{server.port}/redirect?to=http://internal.example/",
            policy=LOOPBACK_ONLY,
            resolver=resolver,
        )


async def test_a_relative_redirect_is_followed(server: _Server) -> None:
    response = await guarded_request("GET", server.url("/redirect?to=/echo"), policy=LOOPBACK_ONLY)
    assert response.status_code == 200
    assert response.json()["path"] == "/echo"
    assert response.url == httpx.URL(server.url("/echo"))


@pytest.mark.parametrize(
    ("status", "method", "expected_method", "keeps_body"),
    [
        (303, "POST", "GET", False),
        (303, "PUT", "GET", False),
        (302, "POST", "GET", False),
        (301, "POST", "GET", False),
        (302, "PUT", "PUT", True),
        (307, "POST", "POST", True),
        (308, "PUT", "PUT", True),
    ],
)
async def test_redirects_rewrite_the_method_like_browsers(
    server: _Server, status: int, method: str, expected_method: str, keeps_body: bool
) -> None:
    response = await guarded_request(
        method,
        server.url(f"/redirect?status={status}&to=/echo"),
        json_body={"a": 1},
        policy=LOOPBACK_ONLY,
    )
    echo = response.json()
    assert echo["method"] == expected_method
    assert echo["body"] == ('{"a":1}' if keeps_body else "")
    assert ("content-type" in echo["headers"]) is keeps_body


async def test_credentials_are_dropped_when_a_redirect_changes_origin(server: _Server) -> None:
    resolver = StaticResolver({"a.test": "127.0.0.1", "b.test": "127.0.0.1"})
    secret = {"Authorization": "Bearer s3cret", "Cookie": "session=s3cret", "X-Trace": "1"}
    same = await guarded_request(
        "GET",
        f"http://a.test:{server.port}/redirect?to=/echo",
        headers=secret,
        policy=OPEN,
        resolver=resolver,
    )
    assert same.json()["headers"]["authorization"] == "Bearer s3cret"
    other = await guarded_request(
        "GET",
        f"http://a.test:{server.port}/redirect?to=http://b.test:{server.port}/echo",
        headers=secret,
        policy=OPEN,
        resolver=resolver,
    )
    received = other.json()["headers"]
    assert "authorization" not in received
    assert "cookie" not in received
    assert received["x-trace"] == "1"
    assert received["host"] == f"b.test:{server.port}"


async def test_too_many_redirects_is_an_error(server: _Server) -> None:
    with pytest.raises(TooManyRedirectsError, match="more than 3 times") as caught:
        await guarded_request("GET", server.url("/loop"), policy=OPEN, max_redirects=3)
    assert caught.value.code == "too_many_redirects"
    assert len(server.seen) == 4


async def test_without_following_a_redirect_is_returned_as_it_is(server: _Server) -> None:
    response = await guarded_request(
        "GET",
        server.url("/redirect?to=http://169.254.169.254/"),
        policy=OPEN,
        follow_redirects=False,
    )
    assert response.status_code == 302
    assert response.headers["location"] == "http://169.254.169.254/"


# --- URLs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/file", "ftp: URLs are not fetched"),
        ("file:///etc/passwd", "file: URLs are not fetched"),
        ("example.com/path", r"add https:// in front"),
        ("http://example.com:port/", "malformed"),
    ],
)
async def test_only_http_and_https_urls_are_requested(url: str, message: str) -> None:
    with pytest.raises(InvalidURLError, match=message) as caught:
        await guarded_request("GET", url)
    assert caught.value.code == "invalid_url"
    assert caught.value.retryable is False


async def test_a_redirect_to_another_scheme_is_refused(server: _Server) -> None:
    with pytest.raises(InvalidURLError, match=r"to 'file:/+etc/passwd', which is not an http"):
        await guarded_request(
            "GET", server.url("/redirect?to=file:///etc/passwd"), policy=LOOPBACK_ONLY
        )


async def test_a_name_that_does_not_resolve_is_a_connect_error() -> None:
    with pytest.raises(httpx.ConnectError, match=r"could not resolve nowhere\.example"):
        await guarded_request("GET", "http://nowhere.example/", resolver=StaticResolver({}))


def test_urls_in_messages_lose_credentials_and_query() -> None:
    assert display_url("https://user:pw@api.example/v1/items?key=s3cret#top") == (
        "https://api.example/v1/items?…"
    )
    assert display_url("http://api.example/v1") == "http://api.example/v1"


# --- bodies --------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True])
async def test_read_body_refuses_a_body_past_the_limit(server: _Server, chunked: bool) -> None:
    url = server.url("/big?size=300000" + ("&chunked=1" if chunked else ""))
    async with guarded_stream("GET", url, policy=OPEN) as response:
        with pytest.raises(ResponseTooLargeError, match="larger than 100000 bytes") as caught:
            await read_body(response, max_bytes=100_000)
    assert caught.value.code == "http_response_too_large"


async def test_read_body_returns_a_body_within_the_limit(server: _Server) -> None:
    async with guarded_stream(
        "GET", server.url("/big?size=100000&chunked=1"), policy=OPEN
    ) as response:
        assert await read_body(response, max_bytes=100_000) == b"x" * 100_000


async def test_read_body_counts_decompressed_bytes(server: _Server) -> None:
    # 300 kB of zeros compress to a few hundred bytes: the limit is on what is unpacked.
    async with guarded_stream("GET", server.url("/gzip?size=300000"), policy=OPEN) as response:
        assert int(response.headers["content-length"]) < 1000
        with pytest.raises(ResponseTooLargeError):
            await read_body(response, max_bytes=100_000)


async def test_read_body_ignores_the_size_a_head_answer_declares(server: _Server) -> None:
    async with guarded_stream("HEAD", server.url("/big?size=300000"), policy=OPEN) as response:
        assert response.headers["content-length"] == "300000"
        assert await read_body(response, max_bytes=100_000) == b""


async def test_text_bodies_are_sent(server: _Server) -> None:
    response = await guarded_request(
        "POST", server.url("/echo"), content="plain words", policy=OPEN
    )
    assert response.json()["body"] == "plain words"


async def test_a_borrowed_transport_is_not_closed(server: _Server) -> None:
    async with httpx.AsyncHTTPTransport() as transport:
        for _ in range(2):
            response = await guarded_request(
                "GET", server.url("/echo"), policy=OPEN, transport=transport
            )
            assert response.status_code == 200
