"""Clocks: best-of-k timing with timeit-style calibration, and tracemalloc passes.

The cyclic collector stays enabled (as in real use); it is run before every sample so
that one sample does not pay for the garbage of the previous one.
"""

from __future__ import annotations

import asyncio
import gc
import math
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

AsyncBody = Callable[[], Awaitable[Any]]


async def calibrate(body: AsyncBody, min_time: float) -> int:
    """How many calls of `body` one sample needs to last at least `min_time` seconds."""
    loops = 1
    while True:
        if await _sample(body, loops) * loops >= min_time or loops >= 1 << 20:
            return loops
        loops *= 2


async def best_of(body: AsyncBody, repeat: int, loops: int = 1) -> float:
    """The best, over `repeat` samples, of the mean seconds per call of `body`."""
    best = math.inf
    for _ in range(repeat):
        best = min(best, await _sample(body, loops))
    return best


async def _sample(body: AsyncBody, loops: int) -> float:
    gc.collect()
    started = time.perf_counter()
    for _ in range(loops):
        await body()
    return (time.perf_counter() - started) / loops


def best_of_sync(body: Callable[[], Any], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        body()
        best = min(best, time.perf_counter() - started)
    return best


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """Bytes traced by tracemalloc over one batch, relative to just before it."""

    peak: int  # the highest point while the batch ran: what is in flight at once
    retained: int  # after the batch ended, its results were dropped and gc ran: leaks


async def traced(body: AsyncBody) -> MemoryUse:
    """Run `body` once under tracemalloc. `body` must not return what it allocated."""
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        await body()
        peak = tracemalloc.get_traced_memory()[1]
        # The loop's handle that resumed us still holds the awaited future (and through
        # it the batch's results) until the loop runs its next callback.
        await asyncio.sleep(0)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return MemoryUse(peak - baseline, retained - baseline)
