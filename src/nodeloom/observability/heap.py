"""The cyclic garbage collector's policy for a long-lived process (`nodeloom serve`, a
`nodeloom worker` process): `settle_heap()`, called once when start-up is over.

By then the process holds ~100,000 objects that live as long as it does (modules,
compiled flows, the store's engine), and every full collection scans them all again:
a busy process spent 13-16% of its CPU per recorded run on it (docs/performance.md).
`gc.freeze()` moves them out of the collector's reach; objects made later are collected
as before, so reference cycles of runs are still freed.

Then the thresholds (THRESHOLDS): a run in flight holds its records, coroutines and
recorder for as long as it runs, so with Python's default (a young collection every 700
allocations, a middle one every tenth, a full one every tenth of those) a thousand runs
in flight are scanned again and again while alive: 20-30% of the CPU of a batch of
1,000 recorded runs, for nothing (those collections found no garbage: a recorded run
makes no reference cycle). A young collection every 50,000 allocations scans each
object about once; a cycle made elsewhere is freed a little later, after at most that
many allocations (a few MB).

A library, a test or the CLI's one-shot commands never call it: it is a process-wide
policy, for a process to choose.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("nodeloom")

THRESHOLDS = (50_000, 20, 20)  # young, middle, full (gc.set_threshold)


def settle_heap() -> int:
    """Collect once, freeze what is left (it lives as long as the process) and set the
    collector's thresholds to THRESHOLDS; returns how many objects were frozen. Call it
    once, after start-up."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    frozen = gc.get_freeze_count()
    log.info(
        "start-up over: %d objects moved out of the garbage collector's scans; "
        "collection thresholds %s",
        frozen,
        THRESHOLDS,
    )
    return frozen
