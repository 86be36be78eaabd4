"""A recorded run is freed by reference counting: it leaves nothing in reference cycles for
the cyclic collector (whose full collections otherwise cost a busy process a third of its
CPU, docs/performance.md "Recorded runs")."""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from pathlib import Path

import nodeloom
from nodeloom.runs import RunService
from nodeloom.testing.builders import chain, node

WINDOWS = 3  # see below


async def test_a_recorded_run_leaves_no_objects_in_reference_cycles(
    service: RunService, registry, tmp_path: Path
):
    flow = nodeloom.load(
        chain(*(node(f"m{i}", "mark", log=str(tmp_path / "log")) for i in range(1, 4))),
        registry=registry,
    )
    await service.start(flow, "hi")  # warm: caches, compiled statements, the committer
    # A cycle a run makes is left by every run, so every window of 5 runs would show it.
    # Garbage of an earlier test (an engine it disposed, let go of by a callback that runs
    # late on a loaded machine) lands in one window at most: one clean window is enough.
    seen = []
    for _ in range(WINDOWS):
        left = await _cycles_left_by(service, flow, runs=5)
        if not left:
            return
        seen.append(left)
    raise AssertionError(f"objects left in reference cycles by 5 recorded runs: {seen}")


async def _cycles_left_by(service: RunService, flow: nodeloom.Flow, runs: int) -> Counter[str]:
    for _ in range(3):
        await asyncio.sleep(0)  # callbacks already due run first
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            result = await service.start(flow, "hi")
            assert result.status is nodeloom.RunStatus.COMPLETED
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return Counter(type(item).__qualname__ for item in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
