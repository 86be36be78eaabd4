"""The worker fleet: `python -m benchmarks.fleet [--runs R] [--workers 1,2,4] [--json]`.

R runs of an I/O-bound 5-node flow (each node awaits 50 ms: `pack/sleep`) submitted over
HTTP (`POST /api/flows/{id}/runs`, 50 at a time) to

- the in-process server (`nodeloom serve`, no queue): the floor;
- `nodeloom serve --queue` with 1, 2 and 4 worker processes (`nodeloom worker --processes
  N --concurrency 10`),

all on one throwaway Postgres and (for the queue) one Redis, started here (see
benchmarks.fleet_setup). Each setup first runs a warm-up batch (untimed: flows compiled,
connections opened), then R runs. Reported per setup: runs/s (R over the time from the
first submit to the last `finished_at`); p50/p99 from submit to the run's end; p50 of the
queue wait (recorded → started) and of the run itself (started → finished); CPU ms per
run of every process (server, workers, Postgres, Redis) and of each; Postgres statements
(BEGIN and COMMIT included) and transactions, and Redis commands, per run. Every run
must complete, exactly once (each node's execution is on record once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from benchmarks.fleet_setup import (
    PG_SETTINGS,
    Counters,
    Setup,
    cpu_seconds,
    postmaster,
    redis_server,
)
from benchmarks.report import TIMES, Figure, Verdict
from nodeloom.store import RunRecord, Store
from nodeloom.testing.builders import chain, node
from nodeloom.testing.stores import create_database, drop_database, throwaway_postgres

FLOW = chain(*(node(f"n{i}", "sleep", seconds=0.05) for i in range(5)))
NODES = [f"n{i}" for i in range(5)]
SUBMITTERS = 50
CONCURRENCY = 10
RUNS = 400
QUICK_RUNS = 30


async def _submit_all(client: httpx.AsyncClient, flow_id: str, runs: int) -> dict[str, float]:
    submitted: dict[str, float] = {}
    gate = asyncio.Semaphore(SUBMITTERS)

    async def submit() -> None:
        async with gate:
            at = time.time()
            response = await client.post(f"/api/flows/{flow_id}/runs", json={})
            if response.status_code != 202:
                raise RuntimeError(f"submit: {response.status_code} {response.text}")
            submitted[response.json()["run_id"]] = at

    await asyncio.gather(*(submit() for _ in range(runs)))
    return submitted


async def _until_done(database: str, expected: int, within: float = 600) -> int:
    """Until `expected` runs have ended; returns how many statements it sent (one a poll)."""
    connection = await asyncpg.connect(database)
    polls = 0
    try:
        deadline = time.monotonic() + within
        while True:
            polls += 1
            ended, failed = await connection.fetchrow(
                "SELECT count(*) FILTER (WHERE finished_at IS NOT NULL), "
                "count(*) FILTER (WHERE status NOT IN ('completed', 'running', 'queued')) "
                "FROM runs"
            )
            if failed or ended >= expected:
                return polls
            if time.monotonic() > deadline:
                raise RuntimeError(f"{expected - ended} run(s) did not end in {within:g} s")
            await asyncio.sleep(0.2)
    finally:
        await connection.close()


async def _records(database: str, run_ids: list[str]) -> list[RunRecord]:
    """The runs' records; raises unless each completed with each node executed once."""
    store = await Store.open(database)
    try:
        records = []
        for run_id in run_ids:
            record = await store.get_run(run_id)
            rows = await store.node_executions(run_id)
            if record.status != "completed" or sorted(r.node_id for r in rows) != NODES:
                raise RuntimeError(f"run {run_id}: {record.status}, executions {rows}")
            records.append(record)
        return records
    finally:
        await store.close()


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def _stamp(at: datetime | None) -> float:
    return math.nan if at is None else at.timestamp()


async def run_setup(
    folder: Path,
    server: str,
    queue: str | None,
    workers: int,
    runs: int,
    counters: Counters,
    others: dict[str, int],
    detail: bool = False,
) -> dict[str, Any]:
    database = await create_database(server)
    setup = Setup(folder, database, queue, workers, CONCURRENCY)
    try:
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
            await setup.workers_ready()
            saved = await client.post("/api/flows", json={"name": "fleet", "document": FLOW})
            flow_id = saved.json()["flow_id"]
            warm = max(CONCURRENCY * max(workers, 1), 10)
            await _submit_all(client, flow_id, warm)
            await _until_done(database, warm)
            groups = {
                "server": [setup.server.pid],
                "workers": [setup.fleet.pid] if setup.fleet else [],
                **{name: [pid] for name, pid in others.items()},
            }
            cpu_before = {name: cpu_seconds(pids) for name, pids in groups.items()}
            count_before = await counters.read(database)
            calls_before = await counters.calls(database) if detail else {}
            first = time.time()
            submitted = await _submit_all(client, flow_id, runs)
        polls = await _until_done(database, warm + runs)
        count_after = await counters.read(database)
        if detail:
            _print_calls(workers, runs, calls_before, await counters.calls(database))
        cpu = {name: cpu_seconds(pids) - cpu_before[name] for name, pids in groups.items()}
        records = await _records(database, list(submitted))
    finally:
        setup.close()
        await drop_database(database)
    latencies = [(_stamp(r.finished_at) - submitted[r.id]) * 1000 for r in records]
    started = [r for r in records if r.started_at is not None] or records  # (older stores)
    waits = [(_stamp(r.started_at) - _stamp(r.created_at)) * 1000 for r in started]
    durations = [(_stamp(r.finished_at) - _stamp(r.started_at)) * 1000 for r in started]
    span = max(_stamp(r.finished_at) for r in records) - first
    ends = sorted(_stamp(r.finished_at) for r in records)
    low, high = len(ends) // 10, len(ends) - 1 - len(ends) // 10  # the middle 80 % of ends
    return {
        "setup": f"{workers} worker(s)" if queue else "in-process server",
        "workers": workers if queue else 0,
        "runs": runs,
        "runs_per_s": runs / span,
        # the steady state: without the first and last tenth (start-up, the last slots)
        "steady_runs_per_s": (high - low) / max(ends[high] - ends[low], 1e-9),
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
        "wait_p50_ms": _percentile(waits, 50),
        "run_p50_ms": _percentile(durations, 50),
        "cpu_ms_per_run": sum(cpu.values()) * 1000 / runs,
        "cpu_ms_per_run_by_process": {k: v * 1000 / runs for k, v in cpu.items()},
        # the polls of _until_done are left out (one statement each, no transaction)
        "pg_statements_per_run": (count_after.statements - count_before.statements - polls) / runs,
        "pg_transactions_per_run": (count_after.transactions - count_before.transactions) / runs,
        # Postgres connections opened per run (the one of _until_done left out)
        "pg_sessions_per_run": (count_after.sessions - count_before.sessions - 1) / runs,
        "redis_commands_per_run": (count_after.redis_commands - count_before.redis_commands - 1)
        / runs,
        "redis_round_trips_per_run": (
            count_after.redis_round_trips - count_before.redis_round_trips
        )
        / runs,
    }


def _print_calls(workers: int, runs: int, before: dict[str, int], after: dict[str, int]) -> None:
    """The statements and commands sent per run (the most first)."""
    sent = {key: (calls - before.get(key, 0)) / runs for key, calls in after.items()}
    print(f"--- {workers} worker(s): per run")
    for key, per_run in sorted(sent.items(), key=lambda item: -item[1]):
        if per_run >= 0.05:
            print(f"{per_run:>7.2f}  {key}")


def fleet(runs: int, counts: list[int], detail: bool = False) -> list[dict[str, Any]]:
    """The in-process server, then `serve --queue` with each count of workers."""
    root = Path(tempfile.mkdtemp(prefix="nodeloom-fleet-bench-"))
    results = []
    try:
        with (
            throwaway_postgres(settings=PG_SETTINGS) as server,
            redis_server(root) as (
                queue,
                redis_pid,
            ),
        ):
            counters = Counters(server, queue)
            asyncio.run(counters.prepare())
            others = {"postgres": postmaster(server), "redis": redis_pid}
            try:
                for count in [0, *counts]:
                    results.append(
                        asyncio.run(
                            run_setup(
                                root / f"workers{count}",
                                server,
                                queue if count else None,
                                count,
                                runs,
                                counters,
                                others,
                                detail,
                            )
                        )
                    )
            finally:
                counters.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


SCALING = {2: 1.8, 4: 3.2}  # the bounds: runs/s of N workers over 1 worker's
CPU_BOUND = 2.0  # CPU per run of a fleet over the in-process server's


async def fleet_load(runs: int, counts: tuple[int, ...]) -> tuple[list[Figure], Verdict]:
    """Target 11, for `python -m benchmarks` (the processes run in a thread of their own)."""
    results = await asyncio.to_thread(fleet, runs, list(counts))
    floor, rows = results[0], results[1:]
    one = next(r for r in rows if r["workers"] == 1)
    figures = [
        Figure(
            "fleet.inprocess.throughput",
            f"fleet: {runs:,} runs of 5 x 50 ms nodes, in-process server (Postgres)",
            floor["runs_per_s"],
            "runs/s",
            floor["runs_per_s"],
            higher_is_better=True,
        )
    ]
    passed, judged = True, []
    cores = os.cpu_count() or 1
    for row in rows:
        n = row["workers"]
        scale = row["runs_per_s"] / one["runs_per_s"]
        cpu_ratio = row["cpu_ms_per_run"] / floor["cpu_ms_per_run"]
        cpu_ok = cpu_ratio <= CPU_BOUND
        scale_ok = scale >= SCALING.get(n, 0.0)
        passed = passed and cpu_ok and scale_ok
        # what the CPU allows: every core busy with runs of this setup's CPU cost
        permitted = cores * 1000 / row["cpu_ms_per_run"] / one["runs_per_s"]
        judged.append(
            f"{n} worker(s) {row['runs_per_s']:.1f} runs/s ({scale:.2f}x of 1; its CPU "
            f"{row['cpu_ms_per_run']:.1f} ms/run permits {permitted:.1f}x on {cores} cores), "
            f"CPU {cpu_ratio:.2f}x the in-process server's"
        )
        figures += [
            Figure(
                f"fleet.w{n}.throughput",
                f"fleet: {n} worker process(es), runs/s (floor: in-process server)",
                row["runs_per_s"],
                "runs/s",
                floor["runs_per_s"],
                higher_is_better=True,
            ),
            Figure(
                f"fleet.w{n}.cpu",
                f"fleet: {n} worker(s), CPU per run of all processes",
                row["cpu_ms_per_run"],
                "ms",
                floor["cpu_ms_per_run"],
                target=f"≤ {CPU_BOUND:g}{TIMES} floor",
                passed=cpu_ok,
            ),
            Figure(
                f"fleet.w{n}.pg_statements",
                f"fleet: {n} worker(s), Postgres statements per run",
                row["pg_statements_per_run"],
                "",
                floor["pg_statements_per_run"],
            ),
            Figure(
                f"fleet.w{n}.redis_round_trips",
                f"fleet: {n} worker(s), Redis round trips per run",
                row["redis_round_trips_per_run"],
                "",
                floor["redis_round_trips_per_run"],
                ratio_shown=False,
            ),
        ]
        if n > 1:
            figures.append(
                Figure(
                    f"fleet.w{n}.scaling",
                    f"fleet: {n} workers' runs/s over 1 worker's",
                    scale,
                    TIMES,
                    target=f"≥ {SCALING[n]:g}{TIMES}" if n in SCALING else "",
                    passed=scale_ok if n in SCALING else None,
                )
            )
    return figures, Verdict(11, passed, "every run completed once; " + "; ".join(judged))


def render(results: list[dict[str, Any]]) -> str:
    floor = results[0]
    lines = [
        f"fleet: R = {floor['runs']} runs of 5 nodes x 50 ms, --concurrency {CONCURRENCY} "
        "(medians of the runs; CPU of every process)",
        f"{'setup':<19}{'runs/s':>7}{'steady':>7}{'x1w':>6}{'p50':>7}{'p99':>7}{'wait50':>8}{'run50':>7}"
        f"{'CPU ms':>8}{'CPU x':>6}  {'srv/wrk/pg/redis ms':<21}{'pg st':>6}{'pg tx':>6}"
        f"{'conn':>6}{'redis':>6}{'rtt':>5}",
    ]
    one = next((r for r in results if r["workers"] == 1), None)
    for row in results:
        by = row["cpu_ms_per_run_by_process"]
        split = "/".join(f"{by[k]:.1f}" for k in ("server", "workers", "postgres", "redis"))
        scale = f"{row['runs_per_s'] / one['runs_per_s']:.2f}" if one and row["workers"] else ""
        lines.append(
            f"{row['setup']:<19}{row['runs_per_s']:>7.1f}{row['steady_runs_per_s']:>7.1f}{scale:>6}{row['p50_ms']:>7.0f}"
            f"{row['p99_ms']:>7.0f}{row['wait_p50_ms']:>8.0f}{row['run_p50_ms']:>7.0f}"
            f"{row['cpu_ms_per_run']:>8.1f}{row['cpu_ms_per_run'] / floor['cpu_ms_per_run']:>6.2f}"
            f"  {split:<21}{row['pg_statements_per_run']:>6.1f}"
            f"{row['pg_transactions_per_run']:>6.1f}{row['pg_sessions_per_run']:>6.2f}"
            f"{row['redis_commands_per_run']:>6.1f}"
            f"{row['redis_round_trips_per_run']:>5.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet")
    parser.add_argument("--runs", type=int, default=RUNS, help="R (the issue's figure: 2000)")
    parser.add_argument("--workers", default="1,2,4", help="worker process counts")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--detail", action="store_true", help="print the statements and commands sent most"
    )
    args = parser.parse_args(argv)
    results = fleet(args.runs, [int(n) for n in args.workers.split(",") if n], args.detail)
    print(json.dumps(results, indent=1) if args.json else render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
