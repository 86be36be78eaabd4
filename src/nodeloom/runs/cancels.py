"""One poller per RunService, for all its running runs at once: cancels asked by another
process (`nodeloom runs cancel`, another server), read in one query and carried out here;
and the runs' heartbeat, written in one statement every `heartbeat` seconds (a run also
gets one with every batch of its records)."""

from __future__ import annotations

import asyncio
import contextlib
import time

from nodeloom.engine.events import EventSink
from nodeloom.engine.live import LiveRuns
from nodeloom.plugins.contract import Event
from nodeloom.store import RunRecord, RunStateError, Store
from nodeloom.store.control import RESUMABLE

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
                written = [run_id for run_id in running if self._written(run_id)]
                if written:
                    with contextlib.suppress(Exception):  # a missed heartbeat is not fatal
                        await self.store.heartbeat(*written)
            await self.check(running)

    def _written(self, run_id: str) -> bool:
        """Whether a run running here is in the store: a run's creation rides its first
        write (runs/recorder.py), and one heartbeat of a run not written yet would fail,
        and roll back, the heartbeat of all the others (a busy process always has one)."""
        live = self.live.get(run_id)
        return live is None or getattr(live.owner, "created", None) is None

    def _pause(self) -> float:
        if self.heartbeat <= 0:
            return self.interval
        until_beat = self.heartbeat - (time.monotonic() - self._beaten)
        return max(min(self.interval, until_beat), 0.0)

    async def check(self, run_ids: list[str]) -> None:
        """Cancel those of `run_ids` running here that were asked to stop (the poll's
        step; a process told of a cancel at once, e.g. by a notification, calls it)."""
        asked: set[str] = set()
        with contextlib.suppress(Exception):  # a missed poll is not fatal
            asked = await self.store.cancels_requested(run_ids)
        for run_id in asked:
            live = self.live.get(run_id)
            if live is not None and not live.paused and not live.cancelled:
                live.cancelled = True  # once: let it unwind
                if live.task is not None:
                    live.task.cancel()


async def cancel_elsewhere(
    store: Store, run_id: str, observer: EventSink | None = None
) -> RunRecord:
    """Cancel a run not live in this process. Running in another process: that process
    is asked to (it checks with each heartbeat, or at once when notified). Paused,
    interrupted or queued (before any worker took it): ended now, with its
    `run_cancelled` event. Raises RunStateError for a run that has ended."""
    record = await store.get_run(run_id)
    if record.status == "running":  # its process may have died: find out
        await store.find_interrupted()
        record = await store.get_run(run_id)
    if record.status == "running":
        return await store.request_cancel(run_id)
    ended_here = (*RESUMABLE, "queued")
    if record.status not in ended_here:
        raise RunStateError(run_id, record.status, ("running", *ended_here), "cancelled")
    record = await store.claim_run(run_id, states=ended_here)
    event = Event("run_cancelled", {"duration_ms": 0.0}, run_id=run_id, seq=record.last_seq + 1)
    await store.write_batch(run_id, events=[event])
    if observer is not None:
        observer.emit(event)
    return await store.finish_run(run_id, "cancelled")
