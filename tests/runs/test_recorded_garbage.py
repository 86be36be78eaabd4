"""A recorded run is freed by reference counting: it leaves nothing in reference cycles for
the cyclic collector (whose full collections otherwise cost a busy process a third of its
CPU, docs/performance.md "Recorded runs")."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import nodeloom
from nodeloom.runs import RunService
from nodeloom.testing.builders import chain, node


async def test_a_recorded_run_leaves_no_objects_in_reference_cycles(
    service: RunService, registry, tmp_path: Path
):
    flow = nodeloom.load(
        chain(*(node(f"m{i}", "mark", log=str(tmp_path / "log")) for i in range(1, 4))),
        registry=registry,
    )
    await service.start(flow, "hi")  # warm: caches, compiled statements, the committer
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            result = await service.start(flow, "hi")
            assert result.status is nodeloom.RunStatus.COMPLETED
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = Counter(type(item).__qualname__ for item in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left, f"objects left in reference cycles by 5 recorded runs: {left}"
