"""Run changes from any process, as they are committed: Postgres LISTEN/NOTIFY.

The store notifies `nodeloom_runs` with a run's id in the transaction that writes its
events or changes its status, and `nodeloom_cancels` when a cancel is asked (see
nodeloom.store.access). One connection per process listens to both. A reader of a run
executed elsewhere subscribes before it reads the store, then waits for the next
notification instead of sleeping: the store stays the source of truth, a notification
only says "read again". Waits have a time limit, so a lost connection (it is opened
again, with back-off) slows a reader down to polling but never stops it.

    signals = RunSignals(store.listen_url)
    await signals.start()
    with signals.subscribe(run_id) as changed:
        while not over:
            changed.clear()
            ... read the store ...
            await changed.wait(5.0)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from nodeloom.store.access import CANCEL_CHANNEL, NOTIFY_CHANNEL

log = logging.getLogger("nodeloom.fleet")

RECONNECT_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)


class Subscription:
    """Set when its run changed since the last `clear()`."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def clear(self) -> None:
        self._event.clear()

    def set(self) -> None:
        self._event.set()

    async def wait(self, timeout: float) -> bool:
        """Until the run changes (True) or `timeout` seconds pass (False)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._event.wait()
                return True
        return False


class RunSignals:
    """The LISTEN connection of one process, and who waits for which run."""

    def __init__(self, url: str, on_cancel: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.on_cancel = on_cancel
        self.connected = asyncio.Event()
        self._subscriptions: dict[str, set[Subscription]] = {}
        self._task: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()

    async def start(self, timeout: float = 10.0) -> None:
        """Start listening (and keep listening); wait up to `timeout` s for the first
        connection (a store that is down is waited for in the background)."""
        self._task = asyncio.create_task(self._listen())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.connected.wait()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    @contextlib.contextmanager
    def subscribe(self, run_id: str) -> Iterator[Subscription]:
        subscription = Subscription()
        self._subscriptions.setdefault(run_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            waiting = self._subscriptions.get(run_id)
            if waiting is not None:
                waiting.discard(subscription)
                if not waiting:
                    del self._subscriptions[run_id]

    def _notified(self, _conn: Any, _pid: int, channel: str, run_id: str) -> None:
        if channel == CANCEL_CHANNEL:
            if self.on_cancel is not None:
                self.on_cancel(run_id)
            return
        for subscription in self._subscriptions.get(run_id, ()):
            subscription.set()

    def _wake_all(self) -> None:
        """Notifications may have been missed: every reader reads again."""
        for waiting in self._subscriptions.values():
            for subscription in waiting:
                subscription.set()

    async def _listen(self) -> None:
        import asyncpg

        failures = 0
        while True:
            try:
                conn = await asyncpg.connect(self.url, timeout=10)
            except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
                delay = RECONNECT_SECONDS[min(failures, len(RECONNECT_SECONDS) - 1)]
                if failures == 0:
                    log.warning("cannot LISTEN for run changes (%s); retrying", exc)
                failures += 1
                await asyncio.sleep(delay)
                continue
            try:
                self._lost.clear()
                conn.add_termination_listener(lambda _conn: self._lost.set())
                await conn.add_listener(NOTIFY_CHANNEL, self._notified)
                await conn.add_listener(CANCEL_CHANNEL, self._notified)
                failures = 0
                self.connected.set()
                self._wake_all()
                await self._watch(conn)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("lost the LISTEN connection (%s); reconnecting", exc)
            finally:
                self.connected.clear()
                with contextlib.suppress(Exception):
                    await asyncio.shield(conn.close(timeout=2))

    async def _watch(self, conn: Any) -> None:
        """Until the connection is lost: a cheap query now and then notices a silent
        network drop that no termination callback reports."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10.0):
                    await self._lost.wait()
            if self._lost.is_set() or conn.is_closed():
                return
            await conn.execute("SELECT 1", timeout=5)
