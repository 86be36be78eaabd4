"""Ethan YAML graphs written into tmp_path and run on the real engine.

`ethan.write(text)` writes a YAML file (dedented) and returns its path; `ethan.load(text)`
converts and validates it; `await ethan.run(text, inputs={...})` runs it once and returns
(RunResult, events). LLM nodes use the `mock_llm` fixture's server (OPENAI_BASE_URL).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

import nodeloom
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import ListSink


class Ethan:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write(self, text: str, name: str = "agent.yaml") -> Path:
        path = self.folder / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def load(self, text: str, **options: Any) -> nodeloom.Flow:
        from nodeloom.formats import FormatOptions

        path = self.write(text)
        return nodeloom.load(path, options=FormatOptions(base_dir=self.folder, **options))

    async def run(
        self,
        text: str,
        inputs: dict[str, Any] | None = None,
        *,
        settings: RunSettings | None = None,
        **options: Any,
    ) -> tuple[nodeloom.RunResult, list[nodeloom.Event]]:
        flow = self.load(text, **options)
        sink = ListSink()
        async with flow:
            result = await flow.run(
                trigger={"inputs": inputs} if inputs is not None else None,
                sink=sink,
                settings=settings,
            )
        return result, sink.events


@pytest.fixture
def ethan(tmp_path: Path) -> Ethan:
    return Ethan(tmp_path)


@pytest.fixture
def http_server():
    """A real HTTP server on 127.0.0.1: GET /search?q=X answers {"items": [...]} for X,
    /status/<code> answers that status, /slow waits 2 s. `server.requests` lists the
    paths asked for."""
    import json
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            url = urlparse(self.path)
            if url.path == "/search":
                query = parse_qs(url.query).get("q", [""])[0]
                self._send(200, {"items": [f"{query} 1", f"{query} 2"]})
            elif url.path.startswith("/status/"):
                self._send(int(url.path.rsplit("/", 1)[1]), {"message": "as asked"})
            elif url.path == "/slow":
                time.sleep(2)
                self._send(200, {"slow": True})
            else:
                self._send(404, {"message": "no such page"})

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    server.requests = requests  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
