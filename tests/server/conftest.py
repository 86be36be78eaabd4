"""A real `nodeloom serve` process on a free loopback port, and an httpx client for it.

The server runs with its own data directory and SQLite database, and with the
conformance fixture node pack (`sleep`, `const`, ...) on NODELOOM_NODES_PATH so flows can
take their time without an LLM. One server serves a whole test module.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.plugins.discovery import PATH_VARIABLE

CONFORMANCE_PACK = Path(__file__).parent.parent / "conformance" / "pack"


def nodeloom_executable() -> str:
    beside = Path(sys.executable).parent / "nodeloom"
    if not beside.is_file():
        pytest.fail("the `nodeloom` console script is not installed; run `pip install -e .`")
    return str(beside)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env.update(
        NODELOOM_DATA_DIR=str(folder / "data"),
        NODELOOM_DATABASE_URL=f"sqlite:///{folder / 'nodeloom.db'}",
        AGNO_TELEMETRY="false",
        NO_COLOR="1",
        PYTHONIOENCODING="utf-8",
    )
    env[PATH_VARIABLE] = str(CONFORMANCE_PACK)
    return env


def nodeloom(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nodeloom_executable(), *args], env=env, capture_output=True, text=True, timeout=60
    )


@dataclass
class Server:
    url: str
    token: str
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path
    _clients: list[httpx.Client] = field(default_factory=list)

    def client(self, token: str | None = "default", **options: Any) -> httpx.Client:
        """A client of the server, sending `token` (the server's by default; None: none)."""
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {self.token if token == 'default' else token}"
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30, **options)
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in self._clients:
            client.close()


def start_server(
    folder: Path,
    *extra: str,
    environment: dict[str, str] | None = None,
    port: int | None = None,
) -> Server:
    """`nodeloom serve` with `extra` arguments, and `environment` added to the server's,
    on `port` (default: a free one)."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**server_environment(folder), **(environment or {})}
    created = nodeloom(env, "token", "create", "tests", "--json")
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)["token"]
    port = port or free_port()
    log = folder / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [nodeloom_executable(), "serve", "--port", str(port), *extra],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    server = Server(f"http://127.0.0.1:{port}", token, env, process, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{server.url}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    stop_server(server)
    pytest.fail(f"the server did not start in 30 s:\n{log.read_text()}")


def stop_server(server: Server) -> None:
    server.close()
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def serving(
    tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str] | None = None
) -> Iterator[Server]:
    """A module's server (for a `server` fixture of its own with `environment` added)."""
    started = start_server(tmp_path_factory.mktemp("server"), environment=environment)
    try:
        yield started
    finally:
        stop_server(started)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory)


@pytest.fixture
def api(server: Server) -> httpx.Client:
    """A client with the server's token."""
    return server.client()


# -- reading an SSE stream -------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    id: int | None  # None for frames that are not run events (a chat turn's first and last)
    event: str
    data: dict[str, Any]


def read_frames(
    client: httpx.Client,
    path: str,
    *,
    limit: int | None = None,
    method: str = "GET",
    **options: Any,
) -> list[Frame]:
    """The stream's event frames until it ends (or the first `limit` of them, then the
    connection is dropped)."""
    frames: list[Frame] = []
    with client.stream(method, path, **options) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        for line in response.iter_lines():
            if line == "":
                if "data" in fields:
                    frames.append(
                        Frame(
                            int(fields["id"]) if "id" in fields else None,
                            fields["event"],
                            json.loads(fields["data"]),
                        )
                    )
                    if limit is not None and len(frames) >= limit:
                        return frames
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
    return frames
