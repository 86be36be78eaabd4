"""A throwaway MariaDB server on a free loopback port (started in about half a second).

It needs `mariadbd` (Debian: `apt-get install mariadb-server`; it does not start by
itself). The data folder starts empty and the server runs with `--skip-grant-tables`, so
any user name logs in without a password and `mariadb-install-db` (seconds) is not
needed; nothing is meant to survive the server. As root, it runs as the `mysql` user.

    with throwaway_mariadb() as server:     # "mysql://root@127.0.0.1:PORT"
        ...                                 # CREATE DATABASE as you need
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 30


class MariaDBUnavailable(RuntimeError):
    """mariadbd is missing or the server did not start."""


def _binary() -> str | None:
    for name in ("mariadbd", "mysqld"):
        found = shutil.which(name) or (
            f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None
        )
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            return bool(sock.recv(1))  # the server's greeting
    except OSError:
        return False


@contextmanager
def throwaway_mariadb() -> Iterator[str]:
    """Start a server; yield its base URL; stop it and delete its files on exit."""
    binary = _binary()
    if binary is None:
        raise MariaDBUnavailable(
            "a throwaway MariaDB needs mariadbd (apt-get install mariadb-server); it was not "
            "found on PATH or in /usr/sbin"
        )
    root = Path(tempfile.mkdtemp(prefix="nodeloom-maria-"))
    data = root / "data"
    data.mkdir()
    command = [
        binary,
        "--no-defaults",
        f"--datadir={data}",
        f"--socket={root / 'server.sock'}",
        f"--pid-file={root / 'server.pid'}",
        "--bind-address=127.0.0.1",
        "--skip-grant-tables",
        "--skip-log-bin",
        "--innodb-buffer-pool-size=16M",
        "--innodb-log-file-size=8M",
        "--innodb-flush-log-at-trx-commit=0",
    ]
    if os.geteuid() == 0:
        shutil.chown(root, "mysql", "mysql")
        shutil.chown(data, "mysql", "mysql")
        command.append("--user=mysql")
    port = _free_port()
    command.append(f"--port={port}")
    log = root / "server.log"
    process: subprocess.Popen[bytes] | None = None
    try:
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _accepts(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise MariaDBUnavailable(f"mariadbd did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
        yield f"mysql://root@127.0.0.1:{port}"
    finally:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(root, ignore_errors=True)
