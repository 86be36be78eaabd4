"""`GET /api/runs/{run_id}/files/{sha256}` serves only a blob the run holds; a forged
reference reads nothing anywhere; HTTP Request sends and receives blob references."""

from __future__ import annotations

import hashlib
import http.client
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import chain, edge, graph, node

from .conftest import Server, start_server, stop_server
from .test_runs import save, wait_for

SECRET = "s3cret"
ZIP = b"PK\x03\x04" + bytes(range(256)) * 40


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("files")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[Server]:
    started = start_server(
        tmp_path_factory.mktemp("server"), environment={"NODELOOM_FILES_ROOT": str(root)}
    )
    try:
        yield started
    finally:
        stop_server(started)


class _Peer(BaseHTTPRequestHandler):
    """Answers GET with a zip file; records the body of each POST."""

    received: list[tuple[str, bytes]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Disposition", 'attachment; filename="bundle.zip"')
        self.send_header("Content-Length", str(len(ZIP)))
        self.end_headers()
        self.wfile.write(ZIP)

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        _Peer.received.append((self.headers["Content-Type"], self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()


@pytest.fixture(scope="module")
def peer() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Peer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def hook_then(path: str, *nodes: dict[str, Any]) -> dict[str, Any]:
    return chain(node("hook", "webhook-trigger", path=path, secret=SECRET), *nodes)


def call(server: Server, path: str, **options: Any) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        return client.post(f"/api/hooks/{path}", headers={"X-Nodeloom-Secret": SECRET}, **options)


def uploaded_run(server: Server, content: bytes) -> tuple[str, dict[str, Any]]:
    """A run whose trigger holds an upload of `content`; its id and the reference."""
    api = server.client()
    path = f"hold/{uuid.uuid4().hex[:8]}"
    save(api, hook_then(path, node("noop", "const", value={"ok": True})))
    response = call(server, path, files={"file": ("data.bin", content, "application/zip")})
    assert response.status_code == 200, response.text
    run_id = response.json()["run_id"]
    return run_id, api.get(f"/api/runs/{run_id}").json()["trigger"]["body"]["file"]


def test_a_digest_the_run_does_not_hold_is_not_found(server: Server) -> None:
    api = server.client()
    run_id, ref = uploaded_run(server, b"mine " + uuid.uuid4().bytes)
    other_run, other = uploaded_run(server, b"theirs " + uuid.uuid4().bytes)
    other_sha = other["$ref"].removeprefix("blob:")
    assert api.get(f"/api/runs/{other_run}/files/{other_sha}").status_code == 200
    for digest in (
        other_sha,  # another run's blob: it exists, but this run does not hold it
        hashlib.sha256(b"never stored").hexdigest(),  # a forged digest
        other_sha.upper(),  # not the store's spelling of a digest
        other_sha[:-1],
    ):
        got = api.get(f"/api/runs/{run_id}/files/{digest}")
        assert got.status_code == 404, digest
        assert got.json()["error"]["code"] == "not_found"
    sha = ref["$ref"].removeprefix("blob:")
    assert api.get(f"/api/runs/{uuid.uuid4().hex}/files/{sha}").status_code == 404


@pytest.mark.parametrize(
    "attempt",
    [
        "..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "..",
        "....%2F....%2Fkey",
        "key",
        "tmp",
        "%2E%2E%2F" * 8 + "etc%2Fpasswd",
    ],
)
def test_a_path_in_place_of_the_digest_reaches_no_file(server: Server, attempt: str) -> None:
    run_id, _ = uploaded_run(server, b"paths " + uuid.uuid4().bytes)
    # Sent as written (an HTTP client would resolve the dot segments before sending).
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(
            "GET",
            f"/api/runs/{run_id}/files/{attempt}",
            headers={"Authorization": f"Bearer {server.token}"},
        )
        got = connection.getresponse()
        status, content = got.status, got.read()
    finally:
        connection.close()
    assert status == 404, content
    assert b"root:" not in content and b'"sig"' not in content  # no file, no run value


def test_a_forged_blob_reference_in_a_webhook_body_reads_nothing(
    server: Server, root: Path
) -> None:
    api = server.client()
    _, real = uploaded_run(server, b"someone else's secret " + uuid.uuid4().bytes)
    path = f"forge/{uuid.uuid4().hex[:8]}"
    name = f"stolen-{uuid.uuid4().hex[:6]}.bin"
    save(
        api, hook_then(path, node("save", "write-file", path=name, content="{{ $json.body.file }}"))
    )
    for forged in ({**real, "sig": "0" * 32}, {k: v for k, v in real.items() if k != "sig"}):
        response = call(server, path, json={"file": forged})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["node_id"] == "save" and "cannot be read" in error["message"]
        run_id = error["run_id"]
        sha = real["$ref"].removeprefix("blob:")
        assert api.get(f"/api/runs/{run_id}/files/{sha}").status_code == 404
        assert not (root / name).exists()


def test_http_request_sends_an_upload_as_its_body_and_as_a_multipart_part(
    server: Server, peer: str
) -> None:
    api = server.client()
    path = f"send/{uuid.uuid4().hex[:8]}"
    common = {"method": "POST", "url": f"{peer}/in", "allow_private_network": True}
    flow = graph(
        node("hook", "webhook-trigger", path=path, secret=SECRET),
        node("raw", "http-request", body="{{ $trigger.body.file }}", **common),
        node(
            "form",
            "http-request",
            multipart=True,
            body={"note": "scan", "file": "{{ $trigger.body.file }}"},
            **common,
        ),
        edge("hook", "raw"),
        edge("raw", "form", "response"),
    )
    save(api, flow)
    _Peer.received.clear()
    response = call(server, path, files={"file": ("bundle.zip", ZIP, "application/zip")})
    assert response.status_code == 200, response.text
    (raw_type, raw), (form_type, form) = _Peer.received
    assert (raw_type, raw) == ("application/zip", ZIP)
    assert form_type.startswith("multipart/form-data; boundary=")
    assert b'name="file"; filename="bundle.zip"\r\nContent-Type: application/zip' in form
    assert ZIP in form and b"scan" in form


def test_http_request_keeps_a_binary_answer_in_the_run_store_and_it_downloads(
    server: Server, peer: str, root: Path
) -> None:
    api = server.client()
    path = f"fetch/{uuid.uuid4().hex[:8]}"
    flow = hook_then(
        path, node("get", "http-request", url=f"{peer}/b.zip", allow_private_network=True)
    )
    save(api, flow)
    response = call(server, path, json={})
    assert response.status_code == 200, response.text
    run_id = response.json()["run_id"]
    run = wait_for(api, run_id, "completed")
    body = run["timeline"][-1]["outputs"]["response"]["body"]
    sha = hashlib.sha256(ZIP).hexdigest()
    assert body["$ref"] == f"blob:{sha}" and body["name"] == "bundle.zip"
    assert (body["mime"], body["size"]) == ("application/zip", len(ZIP))
    assert not (root / "downloads").exists()
    got = api.get(f"/api/runs/{run_id}/files/{sha}", params={"name": "../../x.zip"})
    assert got.content == ZIP
    assert got.headers["content-disposition"] == 'attachment; filename="x.zip"'
