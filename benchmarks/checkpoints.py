"""Target 7: what recording a run costs. A chain of trivial nodes runs recorded (a
RunService on a real database: every event and a checkpoint per node) and unrecorded;
the difference per node is the checkpoint overhead. The floor writes the same rows with
the bare driver in one transaction. Storage: the database's growth per node execution,
beside the bytes of JSON those rows hold."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import nodeloom
from benchmarks import graphs
from benchmarks.report import Figure, Verdict
from benchmarks.timing import best_of
from nodeloom.runs import RunService
from nodeloom.store import Store

SINK = nodeloom.NullSink()
CHECKPOINT_MS = 0.3  # the bound, on SQLite


async def checkpoints(n: int, repeat: int) -> tuple[list[Figure], list[Verdict]]:
    flow = nodeloom.load(graphs.passing_chain(n), registry=graphs.registry())
    settings = nodeloom.RunSettings(max_steps=n + 10)
    plain = functools.partial(flow.run, "hi", sink=SINK, settings=settings)
    await plain()
    unrecorded = await best_of(plain, repeat)
    figures: list[Figure] = []
    verdicts: list[Verdict] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        sqlite_url = f"sqlite:///{root / 'bench.db'}"
        rows_json = await _rows_json(flow, settings, sqlite_url, root)
        floor_s = _sqlite_floor(rows_json, root / "floor.db")
        ms, size = await _measure(flow, settings, sqlite_url, root, n, repeat, unrecorded)
        figures += _figures("sqlite", "SQLite", n, ms, floor_s / n * 1000, size, rows_json)
        passed = ms <= CHECKPOINT_MS
        verdicts.append(
            Verdict(7, passed, f"SQLite: {ms:.3f} ms per node on a chain of {n:,} nodes")
        )
        postgres = await _postgres(flow, settings, root, n, repeat, unrecorded, rows_json)
        figures += postgres
    return figures, verdicts


async def _measure(
    flow: nodeloom.Flow,
    settings: nodeloom.RunSettings,
    url: str,
    root: Path,
    n: int,
    repeat: int,
    unrecorded: float,
) -> tuple[float, float]:
    """(checkpoint ms per node, database bytes per node execution)."""
    store = await Store.open(url, blob_dir=root / "blobs")
    service = RunService(store, flow.registry, heartbeat=0)
    try:
        run = functools.partial(service.start, flow, "hi", settings=settings)
        await run()
        before = await _database_bytes(store, url)
        recorded = await best_of(run, repeat)
        after = await _database_bytes(store, url)
    finally:
        await service.aclose()
        await store.close()
    per_node_ms = max(recorded - unrecorded, 0.0) / n * 1000
    return per_node_ms, (after - before) / (repeat * n)


async def _database_bytes(store: Store, url: str) -> float:
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            size = connection.execute("PRAGMA page_size").fetchone()[0]
            free = connection.execute("PRAGMA freelist_count").fetchone()[0]
        return float((pages - free) * size)
    import asyncpg

    connection = await asyncpg.connect(url)
    try:
        await connection.execute("VACUUM")
        return float(await connection.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await connection.close()


async def _rows_json(
    flow: nodeloom.Flow, settings: nodeloom.RunSettings, url: str, root: Path
) -> list[tuple[str, str]]:
    """The JSON of one recorded run's events and checkpoints, as the store got them."""
    store = await Store.open(url, blob_dir=root / "blobs")
    service = RunService(store, flow.registry, heartbeat=0)
    try:
        result = await service.start(flow, "hi", settings=settings)
        events = [json.dumps(e.to_json()) for e in await store.events(result.run_id)]
        nodes = [
            json.dumps({"inputs": r.inputs, "outputs": r.outputs, "hash": r.input_hash})
            for r in await store.node_executions(result.run_id)
        ]
    finally:
        await service.aclose()
        await store.close()
    return [("event", text) for text in events] + [("node", text) for text in nodes]


def _sqlite_floor(rows: list[tuple[str, str]], path: Path) -> float:
    """The same rows written with the bare sqlite3 driver, one transaction, WAL."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, kind TEXT, body TEXT)")
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("INSERT INTO t (kind, body) VALUES (?, ?)", rows)
        connection.execute("COMMIT")
        best = min(best, time.perf_counter() - started)
    connection.close()
    return best


async def _postgres(
    flow: nodeloom.Flow,
    settings: nodeloom.RunSettings,
    root: Path,
    n: int,
    repeat: int,
    unrecorded: float,
    rows_json: list[tuple[str, str]],
) -> list[Figure]:
    from nodeloom.testing.stores import create_database, throwaway_postgres
    from nodeloom.testing.stores.postgres import PostgresUnavailable

    try:
        with throwaway_postgres() as server:
            url = await create_database(server)
            ms, size = await _measure(flow, settings, url, root, n, repeat, unrecorded)
            floor_s = await _postgres_floor(url, rows_json)
    except PostgresUnavailable:
        return []
    return _figures("postgres", "Postgres", n, ms, floor_s / n * 1000, size, rows_json)


async def _postgres_floor(url: str, rows: list[tuple[str, str]]) -> float:
    import asyncpg

    connection = await asyncpg.connect(url)
    try:
        await connection.execute("CREATE TABLE t (n SERIAL PRIMARY KEY, kind TEXT, body TEXT)")
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            async with connection.transaction():
                await connection.executemany("INSERT INTO t (kind, body) VALUES ($1, $2)", rows)
            best = min(best, time.perf_counter() - started)
        return best
    finally:
        await connection.close()


def _figures(
    key: str,
    name: str,
    n: int,
    ms: float,
    floor_ms: float,
    size: float,
    rows_json: list[tuple[str, str]],
) -> list[Figure]:
    json_bytes = sum(len(text) for _, text in rows_json) / n
    bound: dict[str, Any] = (
        {"target": f"≤ {CHECKPOINT_MS * 1000:g} µs", "passed": ms <= CHECKPOINT_MS}
        if key == "sqlite"
        else {}
    )
    return [
        Figure(
            f"checkpoint.{key}.per_node",
            f"{name}: recording cost per node (chain of {n:,})",
            ms * 1000,
            "µs",
            floor_ms * 1000,
            **bound,
        ),
        Figure(
            f"checkpoint.{key}.bytes",
            f"{name}: storage per node execution",
            size / 1000,
            "KB",
            json_bytes / 1000,
        ),
    ]


if __name__ == "__main__":  # a quick look: python -m benchmarks.checkpoints
    found, judged = asyncio.run(checkpoints(1_000, 3))
    for figure in found:
        print(figure.label, round(figure.value, 4), figure.unit, "floor", figure.floor)
    print(judged)
