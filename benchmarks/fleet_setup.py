"""The processes of the fleet benchmark (benchmarks.fleet) and what it reads of them.

- `Setup`: `nodeloom serve` (with `--queue`, `nodeloom worker --processes N`, or without) on
  a fresh database of the benchmark's Postgres, ready once its workers joined the registry;
- `cpu_seconds`: CPU time of process trees, from /proc (what each process used, plus what
  it collected from its reaped children);
- `Counters`: Postgres statements (pg_stat_statements, BEGIN and COMMIT included: each is a
  round trip), transactions and connections opened (pg_stat_database) of one database, and
  Redis commands (INFO commandstats).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import redis

from nodeloom.store import Store

PACK = Path(__file__).parent / "pack"
TICKS = os.sysconf("SC_CLK_TCK")
# The throwaway Postgres of the benchmark counts every statement.
PG_SETTINGS = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.max": "10000"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(roots: list[int]) -> float:
    """CPU time of the process trees under `roots` (live processes, plus what each root
    collected from its reaped children)."""
    parents: dict[int, int] = {}
    times: dict[int, tuple[float, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields[1])
        own = (int(fields[11]) + int(fields[12])) / TICKS
        reaped = (int(fields[13]) + int(fields[14])) / TICKS
        times[pid] = (own, reaped)
    total = 0.0
    for pid, (own, reaped) in times.items():
        ancestor, inside = pid, False
        while ancestor > 1:
            if ancestor in roots:
                inside = True
                break
            ancestor = parents.get(ancestor, 1)
        if inside:
            total += own + (reaped if pid in roots else 0.0)
    return total


@contextmanager
def redis_server(folder: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    pidfile = folder / "redis.pid"
    subprocess.run(
        [
            *("redis-server", "--port", str(port), "--bind", "127.0.0.1"),
            *("--daemonize", "yes", "--save", "", "--appendonly", "no"),
            *("--pidfile", str(pidfile), "--dir", str(folder)),
        ],
        check=True,
        capture_output=True,
    )
    while not (pidfile.exists() and pidfile.read_text().strip()):  # written, then filled
        time.sleep(0.02)
    pid = int(pidfile.read_text())
    try:
        yield f"redis://127.0.0.1:{port}/0", pid
    finally:
        os.kill(pid, 9)


def postmaster(server: str) -> int:
    port = server.rsplit(":", 1)[1]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"postgres") and port.encode() in argv:
                return int(entry)
    raise RuntimeError(f"no postmaster on port {port}")


# Redis commands sent as such (not from inside a Lua script): Dramatiq sends only scripts
# (EVALSHA); nodeloom counts deliveries (INCR and EXPIRE in one pipeline) and clears them.
REDIS_ROUND_TRIPS = ("evalsha", "eval", "incrby", "llen")
REDIS_OWN = ("del",)  # also called by Dramatiq's script, but only when it purges a queue


@dataclass(frozen=True)
class Count:
    statements: int
    transactions: int
    sessions: int  # Postgres connections opened (each a backend forked, a login)
    redis_commands: int  # INFO commandstats: a script's commands counted too
    redis_round_trips: int


class Counters:
    """Round trips to Postgres (one database) and Redis so far."""

    def __init__(self, server: str, queue: str) -> None:
        self.server = server
        self.redis = redis.Redis.from_url(queue)

    async def prepare(self) -> None:
        connection = await asyncpg.connect(f"{self.server}/postgres")
        try:
            await connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        finally:
            await connection.close()

    async def read(self, database: str) -> Count:
        connection = await asyncpg.connect(f"{self.server}/postgres")
        try:
            row = await connection.fetchrow(
                "SELECT coalesce(sum(calls), 0) AS statements, coalesce(sum(calls) FILTER "
                "(WHERE query ILIKE 'commit%'), 0) AS transactions, (SELECT sessions FROM "
                "pg_stat_database WHERE datname = $1) AS sessions FROM pg_stat_statements "
                "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)",
                database.rsplit("/", 1)[1],
            )
        finally:
            await connection.close()
        stats = await asyncio.to_thread(self.redis.info, "commandstats")
        calls = {
            name.removeprefix("cmdstat_"): int(entry["calls"]) for name, entry in stats.items()
        }
        trips = sum(calls.get(name, 0) for name in (*REDIS_ROUND_TRIPS, *REDIS_OWN))
        return Count(
            int(row["statements"]),
            int(row["transactions"]),
            int(row["sessions"] or 0),
            sum(calls.values()),
            trips,
        )

    async def calls(self, database: str) -> dict[str, int]:
        """Calls so far of each statement of `database` and of each Redis command."""
        connection = await asyncpg.connect(f"{self.server}/postgres")
        try:
            rows = await connection.fetch(
                "SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query "
                "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE "
                "datname = $1)",
                database.rsplit("/", 1)[1],
            )
        finally:
            await connection.close()
        stats = await asyncio.to_thread(self.redis.info, "commandstats")
        calls = {f"redis {name[8:]}": int(value["calls"]) for name, value in stats.items()}
        for row in rows:
            calls[row["query"]] = calls.get(row["query"], 0) + int(row["calls"])
        return calls

    def close(self) -> None:
        self.redis.close()


class Setup:
    """One server (with --queue and workers, or without) on a fresh database."""

    def __init__(
        self, folder: Path, database: str, queue: str | None, workers: int, concurrency: int
    ) -> None:
        folder.mkdir(parents=True)
        self.database = database
        self.workers = workers if queue else 0
        self.env = {
            **os.environ,
            "NODELOOM_DATA_DIR": str(folder / "data"),
            "NODELOOM_DATABASE_URL": database,
            "NODELOOM_NODES_PATH": str(PACK),
            "AGNO_TELEMETRY": "false",
            "NO_COLOR": "1",
        }
        if queue:
            self.env["NODELOOM_QUEUE_URL"] = queue
        command = [sys.executable, "-m", "nodeloom.cli"]
        created = subprocess.run(
            [*command, "token", "create", "bench", "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        self.token = json.loads(created.stdout)["token"]
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = (folder / "processes.log").open("wb")
        self.server = self._start(*command, "serve", "--port", str(port))
        self.fleet = None
        if self.workers:
            worker = ("worker", "--processes", str(workers), "--concurrency", str(concurrency))
            self.fleet = self._start(*command, *worker)

    def _start(self, *command: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(command, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def processes(self) -> list[subprocess.Popen[bytes]]:
        return [self.server] + ([self.fleet] if self.fleet else [])

    async def workers_ready(self, within: float = 60.0) -> None:
        """Until every worker process has joined the registry (its store and queue open)."""
        store = await Store.open(self.database)
        try:
            deadline = time.monotonic() + within
            while True:
                rows = await store.list_workers()
                if sum(row.role == "worker" for row in rows) >= self.workers:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.workers} worker(s) did not start: {rows}")
                await asyncio.sleep(0.2)
        finally:
            await store.close()

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        self.log.close()
