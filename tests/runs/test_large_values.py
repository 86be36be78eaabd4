"""A node's 50 MB output goes to a blob once: the rows stay small and memory stays bounded."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

MB = 1_000_000
SIZE = 50 * MB


@pytest.mark.slow
async def test_a_50_mb_output_is_recorded_as_one_blob_in_bounded_memory(
    service: RunService, store: Store, registry, tmp_path: Path
):
    document = chain(
        node("big", "mark", log=str(tmp_path / "log"), size=SIZE),
        node("after", "mark", log=str(tmp_path / "log")),
    )
    flow = nodeloom.load(document, registry=registry)
    tracemalloc.start()
    try:
        result = await service.start(flow)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status is RunStatus.COMPLETED
    # The value itself is 50 MB in the running process; recording it must not copy it
    # over and over (the event, the checkpoint, the next node's inputs share one blob).
    assert peak < 4 * SIZE, f"peak {peak / MB:.0f} MB for a {SIZE / MB:.0f} MB value"

    rows = await store.node_executions(result.run_id, resolve=False)
    big = next(r for r in rows if r.node_id == "big")
    assert big.outputs["output"]["$ref"].startswith("blob:")
    blobs = [p for p in store.blob_dir.rglob("*") if p.is_file()]
    assert len(blobs) == 1, "the value is stored once, referenced by event and checkpoints"
    assert blobs[0].stat().st_size > SIZE
    events = await store.events(result.run_id, resolve=False)
    assert all(len(str(e.data)) < 10_000 for e in events)
    resolved = await store.node_executions(result.run_id)
    after = next(r for r in resolved if r.node_id == "after")
    assert len(after.inputs["input"]["payload"]) == SIZE
