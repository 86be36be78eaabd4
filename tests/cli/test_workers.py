"""`nodeloom workers`: the live servers and workers of the run store's worker registry,
with their load, as a table or JSON lines; a worker that stopped cleanly is no longer
listed (but is with --all). On a real Postgres store."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from nodeloom.observability.fleet import WorkerBeat
from nodeloom.observability.metrics import RunMetrics
from nodeloom.store import Store
from nodeloom.testing.stores.postgres import create_database, drop_database

Nodeloom = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
async def postgres_url(postgres_server: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server)
    try:
        yield url
    finally:
        await drop_database(url)


async def test_a_registered_worker_is_listed_with_its_load_until_it_stops(
    nodeloom: Nodeloom, postgres_url: str, tmp_path: Path
):
    env = {"NODELOOM_DATABASE_URL": postgres_url}
    metrics = RunMetrics()
    store = await Store.open(postgres_url, blob_dir=tmp_path)
    try:
        beat = WorkerBeat(store, role="worker", concurrency=10, load=lambda: 3, metrics=metrics)
        async with beat:
            listed = nodeloom("workers", "--json", env=env)
            table = nodeloom("workers", env=env)
        after = nodeloom("workers", "--json", env=env)
        everyone = nodeloom("workers", "--all", "--json", env=env)
    finally:
        await store.close()

    assert listed.returncode == 0, listed.stderr
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (row["id"], row["role"], row["in_flight"], row["concurrency"]) == (
        beat.id,
        "worker",
        3,
        10,
    )
    assert row["stopped_at"] is None and row["runs"]["completed"] == 0
    assert table.returncode == 0, table.stderr
    assert beat.id in table.stdout and "3/10" in table.stdout

    assert after.returncode == 0 and after.stdout == ""  # stopped: not live
    [stopped] = [json.loads(line) for line in everyone.stdout.splitlines()]
    assert stopped["id"] == beat.id and stopped["stopped_at"] is not None


def test_no_worker_seen_is_said_plainly(nodeloom: Nodeloom, tmp_path: Path):
    result = nodeloom("workers", env={"NODELOOM_DATABASE_URL": f"sqlite:///{tmp_path / 'n.db'}"})
    assert result.returncode == 0, result.stderr
    assert "No worker seen in the last 15 s" in result.stdout
