"""The cyclic garbage collector's policy for a long-lived process (`nodeloom serve`, a
`nodeloom worker` process): `settle_heap()`, called once when start-up is over.

By then the process holds ~100,000 objects that live as long as it does (modules,
compiled flows, the store's engine), and every full collection scans them all again:
a busy process spent 13-16% of its CPU per recorded run on it (docs/performance.md).
`gc.freeze()` moves them out of the collector's reach; objects made later are collected
as before, so reference cycles of runs are still freed. A library, a test or the CLI's
one-shot commands never call it: it is a process-wide policy, for a process to choose.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("nodeloom")


def settle_heap() -> int:
    """Collect once, then freeze what is left (it lives as long as the process); returns
    how many objects were frozen. Call it once, after start-up."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("start-up over: %d objects moved out of the garbage collector's scans", frozen)
    return frozen
