"""The worker fleet: `python -m benchmarks.fleet [--runs R] [--workers 1,2,4] [--json]`.

R runs of an I/O-bound 5-node flow (each node awaits 50 ms: `pack/sleep`) submitted over
HTTP (`POST /api/flows/{id}/runs`, 50 at a time) to

- the in-process server (`nodeloom serve`, no queue): the floor;
- `nodeloom serve --queue` with 1, 2 and 4 worker processes (`nodeloom worker --processes
  N --concurrency 10`),

all on one throwaway Postgres and (for the queue) one Redis, started here. Reported per
setup: runs/s (R over the time from the first submit to the last `finished_at`), p50 and
p99 latency from submit to the run's end (its record's `finished_at`, same clock), and
CPU ms per run of every process together (server, workers, Postgres, Redis; from
/proc). Every run must complete, exactly once (each node's execution is on record once).
Postgres/Redis round trips per run are not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from nodeloom.store import Store
from nodeloom.testing.builders import chain, node
from nodeloom.testing.stores import create_database, drop_database, throwaway_postgres

PACK = Path(__file__).parent / "pack"
FLOW = chain(*(node(f"n{i}", "sleep", seconds=0.05) for i in range(5)))
SUBMITTERS = 50
CONCURRENCY = 10
TICKS = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cpu_seconds(roots: list[int]) -> float:
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
    port = _free_port()
    pidfile = folder / "redis.pid"
    subprocess.run(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "yes",
            "--save",
            "",
            "--appendonly",
            "no",
            "--pidfile",
            str(pidfile),
            "--dir",
            str(folder),
        ],
        check=True,
        capture_output=True,
    )
    while not pidfile.exists():
        time.sleep(0.02)
    pid = int(pidfile.read_text())
    try:
        yield f"redis://127.0.0.1:{port}/0", pid
    finally:
        os.kill(pid, 9)


def _postmaster(server: str) -> int:
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


class Setup:
    """One server (with --queue and workers, or without) on a fresh database."""

    def __init__(self, folder: Path, database: str, queue: str | None, workers: int) -> None:
        folder.mkdir(parents=True)
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
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = (folder / "processes.log").open("wb")
        self.processes = [
            subprocess.Popen(
                [*command, "serve", "--port", str(port)],
                env=self.env,
                stdout=self.log,
                stderr=subprocess.STDOUT,
            )
        ]
        if queue and workers:
            self.processes.append(
                subprocess.Popen(
                    [
                        *command,
                        "worker",
                        "--processes",
                        str(workers),
                        "--concurrency",
                        str(CONCURRENCY),
                    ],
                    env=self.env,
                    stdout=self.log,
                    stderr=subprocess.STDOUT,
                )
            )

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        self.log.close()


async def _measure(setup: Setup, runs: int, others: list[int]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {setup.token}"}
    async with httpx.AsyncClient(base_url=setup.url, headers=headers, timeout=60) as client:
        deadline = time.monotonic() + 60
        while True:
            try:
                if (await client.get("/health")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            await asyncio.sleep(0.2)
        saved = await client.post("/api/flows", json={"name": "fleet", "document": FLOW})
        flow_id = saved.json()["flow_id"]
        await asyncio.sleep(3.0)  # workers ready
        roots = [p.pid for p in setup.processes] + others
        cpu_before = _cpu_seconds(roots)
        submitted: dict[str, float] = {}
        gate = asyncio.Semaphore(SUBMITTERS)

        async def submit() -> None:
            async with gate:
                at = time.time()
                response = await client.post(f"/api/flows/{flow_id}/runs", json={})
                if response.status_code != 202:
                    raise RuntimeError(f"submit: {response.status_code} {response.text}")
                submitted[response.json()["run_id"]] = at

        first = time.time()
        await asyncio.gather(*(submit() for _ in range(runs)))
    return {"first": first, "submitted": submitted, "roots": roots, "cpu_before": cpu_before}


async def _finished(database: str, submitted: dict[str, float], within: float) -> list[Any]:
    store = await Store.open(database)
    try:
        deadline = time.monotonic() + within
        while True:
            records = [await store.get_run(run_id) for run_id in submitted]
            if all(r.status == "completed" for r in records):
                for record in records:
                    rows = await store.node_executions(record.id)
                    if sorted(r.node_id for r in rows) != [f"n{i}" for i in range(5)]:
                        raise RuntimeError(f"run {record.id}: executions {rows}")
                return records
            stuck = [r for r in records if r.status not in ("completed", "running", "queued")]
            if stuck or time.monotonic() > deadline:
                raise RuntimeError(f"runs did not complete: {stuck[:3] or records[:3]}")
            await asyncio.sleep(0.5)
    finally:
        await store.close()


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def _stamp(at: datetime | None) -> float:
    assert at is not None
    return at.timestamp()


async def run_setup(
    folder: Path, server: str, queue: str | None, workers: int, runs: int, others: list[int]
) -> dict[str, Any]:
    database = await create_database(server)
    setup = Setup(folder, database, queue, workers)
    try:
        measured = await _measure(setup, runs, others)
        records = await _finished(database, measured["submitted"], within=600)
        cpu = _cpu_seconds(measured["roots"]) - measured["cpu_before"]
    finally:
        setup.close()
        await drop_database(database)
    latencies = [(_stamp(r.finished_at) - measured["submitted"][r.id]) * 1000 for r in records]
    span = max(_stamp(r.finished_at) for r in records) - measured["first"]
    return {
        "setup": f"{workers} worker(s)" if queue else "in-process server",
        "runs": runs,
        "runs_per_s": runs / span,
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
        "cpu_ms_per_run": cpu * 1000 / runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet")
    parser.add_argument("--runs", type=int, default=200, help="R (the issue's figure: 2000)")
    parser.add_argument("--workers", default="1,2,4", help="worker process counts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",") if n]
    root = Path(tempfile.mkdtemp(prefix="nodeloom-fleet-bench-"))
    results = []
    try:
        with throwaway_postgres() as server, redis_server(root) as (queue, redis_pid):
            others = [_postmaster(server), redis_pid]
            results.append(
                asyncio.run(run_setup(root / "inproc", server, None, 0, args.runs, others))
            )
            for count in counts:
                folder = root / f"workers{count}"
                results.append(
                    asyncio.run(run_setup(folder, server, queue, count, args.runs, others))
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    floor = results[0]
    print(f"fleet: R = {args.runs} runs of 5 nodes x 50 ms, --concurrency {CONCURRENCY}")
    print(f"{'setup':<20}{'runs/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'CPU ms/run':>12}{'CPU x':>7}")
    for row in results:
        ratio = row["cpu_ms_per_run"] / floor["cpu_ms_per_run"]
        print(
            f"{row['setup']:<20}{row['runs_per_s']:>9.1f}{row['p50_ms']:>9.0f}"
            f"{row['p99_ms']:>9.0f}{row['cpu_ms_per_run']:>12.1f}{ratio:>7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
