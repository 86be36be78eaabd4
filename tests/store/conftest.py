"""Fixtures for the store tests: every conformance test runs against SQLite (a file in
tmp_path) and a real Postgres server (a throwaway cluster started once per session).

The Postgres cluster needs `initdb` and `pg_ctl` (Debian: `apt-get install postgresql`;
they live in /usr/lib/postgresql/<version>/bin). Without them the Postgres tests fail,
they do not skip: CI installs them.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from nodeloom.store import Store

BACKENDS = ["sqlite", "postgres"]


def _pg_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres_user(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the `postgres` user."""
    if os.geteuid() != 0:
        return command
    return ["su", "postgres", "-c", shlex.join(command)]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A Postgres cluster on a free port of 127.0.0.1; yields its base URL."""
    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.fail(
            "the Postgres store tests need initdb and pg_ctl (apt-get install postgresql); "
            "they were not found on PATH or in /usr/lib/postgresql/*/bin"
        )
    # Not under pytest's tmp dir: the postgres user cannot enter root's 0700 folders.
    root = Path(tempfile.mkdtemp(prefix="nodeloom-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    log = root / "server.log"
    subprocess.run(
        _as_postgres_user([initdb, "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    started = subprocess.run(
        _as_postgres_user([pg_ctl, "-D", str(data), "-l", str(log), "-w", "-o", options, "start"]),
        capture_output=True,
        text=True,
    )
    if started.returncode != 0:
        text = log.read_text() if log.exists() else ""
        pytest.fail(f"pg_ctl start failed: {started.stderr}\n{text}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_postgres_user([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


async def create_database(server: str) -> str:
    """A new empty database on the server; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(f"{server}/postgres")
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return f"{server}/{name}"


async def drop_database(url: str) -> None:
    server, name = url.rsplit("/", 1)
    connection = await asyncpg.connect(f"{server}/postgres")
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


@pytest.fixture(params=BACKENDS)
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of an empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'nodeloom.db'}"
        return
    server = request.getfixturevalue("postgres_server")
    url = await create_database(server)
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.fixture
async def store(store_url: str, tmp_path: Path) -> AsyncIterator[Store]:
    """An open store on an empty database of each backend."""
    opened = await Store.open(store_url, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()
