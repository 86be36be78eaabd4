"""Many recorded runs at once write to one database without lock failures, on SQLite
and on Postgres."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nodeloom
from nodeloom import RunStatus
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

RUNS = 50


async def test_50_concurrent_runs_are_all_recorded_completely(
    store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    document = chain(*(node(f"m{i}", "mark", log=str(log), seconds=0.01) for i in range(1, 6)))
    flow = nodeloom.load(document, registry=registry)
    service = RunService(store, registry)
    try:
        results = await asyncio.gather(*(service.start(flow, f"run {n}") for n in range(RUNS)))
    finally:
        await service.aclose()
    assert [r.status for r in results] == [RunStatus.COMPLETED] * RUNS
    assert len(log.read_text().split()) == RUNS * 5
    for result in results:
        events = await store.events(result.run_id)
        assert [e.seq for e in events] == list(range(1, 13))
        rows = await store.node_executions(result.run_id)
        assert sorted(r.node_id for r in rows if r.status == "completed") == [
            f"m{i}" for i in range(1, 6)
        ]
    assert len(await store.list_runs(status="completed", limit=None)) == RUNS


async def test_50_runs_in_separate_stores_on_one_sqlite_file_do_not_lock_each_other(
    registry, tmp_path: Path
):
    """Each store has its own connections, as separate processes would."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    log = tmp_path / "log"
    document = chain(*(node(f"m{i}", "mark", log=str(log)) for i in range(1, 4)))
    flow = nodeloom.load(document, registry=registry)
    first = await Store.open(url, blob_dir=tmp_path / "blobs")  # creates the schema
    stores = [first] + [await Store.open(url, blob_dir=tmp_path / "blobs") for _ in range(RUNS - 1)]
    try:
        results = await asyncio.gather(
            *(RunService(store, registry).start(flow) for store in stores)
        )
        assert [r.status for r in results] == [RunStatus.COMPLETED] * RUNS
        assert len(await first.list_runs(status="completed", limit=None)) == RUNS
    finally:
        for store in stores:
            await store.close()
