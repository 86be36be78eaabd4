"""`nodeloom serve` and each `nodeloom worker` process settle their heap once start-up is
over (nodeloom.observability.heap): what is alive then is frozen out of the collector's
scans. Seen in their logs."""

from __future__ import annotations

import gc
import time

from nodeloom.observability.heap import THRESHOLDS, settle_heap

from ..server.conftest import start_server, stop_server
from .conftest import Fleet

SETTLED = "start-up over:"


def test_settling_the_heap_freezes_what_is_alive_and_still_collects_later_cycles():
    thresholds = gc.get_threshold()
    try:
        frozen = settle_heap()
        assert frozen > 0 and gc.get_freeze_count() == frozen
        assert gc.get_threshold() == THRESHOLDS

        class Node:
            pass

        cycle = Node()
        cycle.self = cycle  # type: ignore[attr-defined]
        del cycle
        assert gc.collect() >= 1  # made after the freeze: collected as before
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_the_server_and_each_worker_process_settle_their_heap_once_started(fleet: Fleet):
    server = start_server(
        fleet.folder / "server", "--log-format", "json", environment=fleet.environment()
    )
    try:
        fleet.worker("--processes", "2")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            workers = fleet.logs().count(SETTLED)
            if workers >= 2 and SETTLED in server.log.read_text():
                break
            time.sleep(0.2)
        assert server.log.read_text().count(SETTLED) == 1, server.log.read_text()[-3000:]
        assert fleet.logs().count(SETTLED) == 2, fleet.logs()[-3000:]  # one per process
    finally:
        stop_server(server)
