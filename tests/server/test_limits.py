"""Request bodies are capped (10 MB by default): 413 with a JSON error, whether the size
is declared in Content-Length or only found while the body streams in."""

from __future__ import annotations

from collections.abc import Iterator

from .conftest import Server

LIMIT = 10 * 1024 * 1024


def test_a_body_declared_too_large_is_refused_with_413(server: Server):
    body = b'{"name": "big", "document": {"pad": "' + b"x" * LIMIT + b'"}}'
    response = server.client().post(
        "/api/flows", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "body_too_large" and error["limit"] == LIMIT


def test_a_streamed_body_without_content_length_is_counted_and_refused(server: Server):
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "big", "document": {"pad": "'
        for _ in range(11):
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    response = server.client().post(
        "/api/flows", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


def test_a_body_under_the_limit_is_read(server: Server):
    response = server.client().post(
        "/api/validate", json={"document": {"nodes": [], "edges": [], "description": "x" * 1000}}
    )
    assert response.status_code == 200


def test_the_server_stays_usable_after_refusing_a_body(server: Server):
    client = server.client()
    client.post("/api/flows", content=b"x" * (LIMIT + 1))
    assert client.get("/api/flows").status_code == 200
