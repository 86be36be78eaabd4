"""A queue deployment for tests: a real Redis (its own, on a free port), a fresh database
on the throwaway Postgres, `nodeloom serve --queue` replicas and `nodeloom worker`
processes, all with the fleet test pack (`mark`, `mark-external`, `die`) and the
conformance pack (`sleep`, ...) on NODELOOM_NODES_PATH.

The broker's heartbeat is short here (2 s, maintenance on every command), so a killed
worker's job is delivered again within a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.plugins.discovery import PATH_VARIABLE
from nodeloom.testing.stores import create_database, drop_database

from ..server.conftest import (
    CONFORMANCE_PACK,
    Server,
    free_port,
    nodeloom_executable,
    start_server,
    stop_server,
)

FLEET_PACK = Path(__file__).parent / "pack"


class Redis:
    """A redis-server on a free port, without persistence unless `appendonly`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.pidfile = folder / "redis.pid"

    def start(self) -> None:
        subprocess.run(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--daemonize",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--pidfile",
                str(self.pidfile),
                "--logfile",
                str(self.folder / "redis.log"),
            ],
            check=True,
        )
        deadline = time.monotonic() + 10
        while not self.pidfile.exists() or not self._pings():
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if not self.pidfile.exists():
            return
        pid = int(self.pidfile.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self._pings() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.pidfile.unlink(missing_ok=True)

    def _pings(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[Redis]:
    server = Redis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def database(postgres_server: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server)
    try:
        yield url
    finally:
        await drop_database(url)


@dataclass
class Fleet:
    """Servers and workers of one deployment (stopped at the end of the test)."""

    folder: Path
    database: str
    redis: Redis
    servers: list[Server] = field(default_factory=list)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        return {
            "NODELOOM_DATABASE_URL": self.database,
            "NODELOOM_QUEUE_URL": self.redis.url,
            "NODELOOM_QUEUE_HEARTBEAT_MS": "2000",
            "NODELOOM_QUEUE_MAINTENANCE": "1000000",
            "NODELOOM_SWEEP_SECONDS": "2",
            PATH_VARIABLE: os.pathsep.join([str(FLEET_PACK), str(CONFORMANCE_PACK)]),
        }

    def server(self) -> Server:
        """A `nodeloom serve` replica (own data folder and token, the shared store)."""
        folder = self.folder / f"server{len(self.servers)}"
        started = start_server(folder, environment=self.environment())
        self.servers.append(started)
        return started

    def worker(self, *options: str) -> subprocess.Popen[bytes]:
        """A `nodeloom worker` (one process unless --processes) that logs to a file."""
        folder = self.folder / f"worker{len(self.workers)}"
        folder.mkdir(parents=True)
        env = {**os.environ, "NODELOOM_DATA_DIR": str(folder / "data"), **self.environment()}
        with (folder / "worker.log").open("wb") as log:
            process = subprocess.Popen(
                [nodeloom_executable(), "worker", *options],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.workers.append(process)
        return process

    def logs(self) -> str:
        parts = [p.read_text() for p in sorted(self.folder.glob("*/worker.log"))]
        return "\n".join(parts + [s.log.read_text() for s in self.servers])

    def stop(self) -> None:
        for server in self.servers:
            stop_server(server)
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.workers:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def fleet(tmp_path: Path, database: str, redis_server: Redis) -> Iterator[Fleet]:
    deployment = Fleet(tmp_path, database, redis_server)
    try:
        yield deployment
    finally:
        deployment.stop()


def save(api: httpx.Client, document: dict[str, Any], name: str = "flow") -> str:
    response = api.post("/api/flows", json={"name": name, "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["flow_id"])


def wait_for(
    api: httpx.Client, run_id: str, *states: str, within: float = 60, fleet: Fleet | None = None
) -> dict[str, Any]:
    deadline = time.monotonic() + within
    run: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = api.get(f"/api/runs/{run_id}")
        if response.status_code == 200:
            run = response.json()
            if run["status"] in states:
                return run
        time.sleep(0.1)
    logs = fleet.logs()[-6000:] if fleet is not None else ""
    raise AssertionError(f"run {run_id} is {run.get('status')!r}, not {states}\n{logs}")


def marks(path: Path) -> list[str]:
    """The lines `mark` nodes appended: one per execution that ran to its end."""
    return path.read_text().splitlines() if path.exists() else []
