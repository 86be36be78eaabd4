"""One poller per RunService, for all its running runs at once: cancels asked by another
process (`nodeloom runs cancel`, another server), read in one query and carried out here;
and the runs' heartbeat, written in one statement every `heartbeat` seconds (a run also
gets one with every batch of its records)."""

from __future__ import annotations

import asyncio
import contextlib
import time

from nodeloom.engine.live import LiveRuns
from nodeloom.store import Store

CANCEL_POLL_SECONDS = 0.5  # how often a cancel asked by another process is looked for


class CancelWatch:
    """Polls while the service has running runs; stops when it has none (`wake` starts
    it again). `heartbeat`: seconds between two heartbeats of the running runs (0: none)."""

    def __init__(
        self,
        store: Store,
        live: LiveRuns,
        interval: float = CANCEL_POLL_SECONDS,
        heartbeat: float = 0.0,
    ):
        self.store = store
        self.live = live
        self.interval = interval
        self.heartbeat = heartbeat
        self._task: asyncio.Task[None] | None = None
        self._beaten = time.monotonic()

    def wake(self) -> None:
        """A run started here: poll for it."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._poll())

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _poll(self) -> None:
        while self.live.running():
            await asyncio.sleep(self._pause())
            running = self.live.running()
            if not running:
                return
            if self.heartbeat > 0 and time.monotonic() - self._beaten >= self.heartbeat:
                self._beaten = time.monotonic()
                with contextlib.suppress(Exception):  # a missed heartbeat is not fatal
                    await self.store.heartbeat(*running)
            asked: set[str] = set()
            with contextlib.suppress(Exception):  # a missed poll is not fatal
                asked = await self.store.cancels_requested(running)
            for run_id in asked:
                live = self.live.get(run_id)
                if live is not None and not live.paused and not live.cancelled:
                    live.cancelled = True  # once: let it unwind
                    if live.task is not None:
                        live.task.cancel()

    def _pause(self) -> float:
        if self.heartbeat <= 0:
            return self.interval
        until_beat = self.heartbeat - (time.monotonic() - self._beaten)
        return max(min(self.interval, until_beat), 0.0)
