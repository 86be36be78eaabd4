"""A throwaway Postgres cluster on a free loopback port (started in about a second).

It needs `initdb` and `pg_ctl` (Debian: `apt-get install postgresql`; they live in
/usr/lib/postgresql/<version>/bin). As root, the server runs as the `postgres` user
(initdb refuses root). fsync is off: the data is not meant to survive the cluster.
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    """initdb/pg_ctl are missing or the cluster did not start."""


def _binary(name: str, bin_dir: Path | None = None) -> str | None:
    if bin_dir is not None:
        candidate = bin_dir / name
        return str(candidate) if candidate.exists() else None
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
    if os.geteuid() != 0:
        return command
    return ["su", "postgres", "-c", shlex.join(command)]


@contextmanager
def throwaway_postgres(
    bin_dir: Path | None = None, settings: dict[str, str] | None = None
) -> Iterator[str]:
    """Start a cluster; yield its base URL (`postgresql://postgres@127.0.0.1:PORT`);
    stop it and delete its files on exit. `bin_dir` holds initdb and pg_ctl of another
    Postgres build (default: PATH, then /usr/lib/postgresql/*/bin). `settings`: more
    server settings, e.g. {"shared_preload_libraries": "pg_stat_statements"}."""
    initdb, pg_ctl = _binary("initdb", bin_dir), _binary("pg_ctl", bin_dir)
    if initdb is None or pg_ctl is None:
        raise PostgresUnavailable(
            "a throwaway Postgres needs initdb and pg_ctl (apt-get install postgresql); "
            "they were not found on PATH or in /usr/lib/postgresql/*/bin"
        )
    # Not under a test's tmp dir: the postgres user cannot enter root's 0700 folders.
    root = Path(tempfile.mkdtemp(prefix="nodeloom-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    log = root / "server.log"
    try:
        subprocess.run(
            _as_postgres_user([initdb, "-D", str(data), "-A", "trust", "-U", "postgres"]),
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        options += "".join(f" -c {key}={value}" for key, value in (settings or {}).items())
        command = [pg_ctl, "-D", str(data), "-l", str(log), "-w", "-o", options, "start"]
        started = subprocess.run(_as_postgres_user(command), capture_output=True, text=True)
        if started.returncode != 0:
            text = log.read_text() if log.exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed: {started.stderr}\n{text}")
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        if data.exists():
            subprocess.run(
                _as_postgres_user([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
                capture_output=True,
            )
        shutil.rmtree(root, ignore_errors=True)


async def create_database(server: str) -> str:
    """A new empty database on the server; returns its URL."""
    import asyncpg

    name = f"t_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(f"{server}/postgres")
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return f"{server}/{name}"


async def drop_database(url: str) -> None:
    import asyncpg

    server, name = url.rsplit("/", 1)
    connection = await asyncpg.connect(f"{server}/postgres")
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()
