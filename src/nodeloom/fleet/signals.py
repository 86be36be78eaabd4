"""Run changes from any process, as they are committed: Postgres LISTEN/NOTIFY.

The store notifies `nodeloom_runs` with a run's id in the transaction that writes its
events or changes its status, and `nodeloom_cancels` when a cancel is asked (see
nodeloom.store.access). One connection per process listens, and only to what the
process needs: `nodeloom_cancels` if it takes cancels (`on_cancel`: a worker), and
`nodeloom_runs` only while somebody here follows a run (a subscription). Every commit of
the fleet notifies each run it wrote, so a process that listened to all of them would
handle every notification of every process (a worker, whose runs nobody follows here,
never does). A reader of a run executed elsewhere subscribes before it reads the store,
then waits for the next notification instead of sleeping: the store stays the source of
truth, a notification only says "read again". When the LISTEN starts (the first
subscription, a new connection), every reader is woken to read again: what changed
before it listened is not missed. Waits have a time limit, so a lost connection (it is
opened again, with back-off) slows a reader down to polling but never stops it.

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
        self.following = asyncio.Event()  # set while `nodeloom_runs` is listened to
        self._subscriptions: dict[str, set[Subscription]] = {}
        self._task: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        self._wanted = asyncio.Event()  # the subscriptions changed: LISTEN or UNLISTEN

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
        if not self._subscriptions and not self.following.is_set():
            self._wanted.set()  # the first one: start listening to run changes
        self._subscriptions.setdefault(run_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            waiting = self._subscriptions.get(run_id)
            if waiting is not None:
                waiting.discard(subscription)
                if not waiting:
                    del self._subscriptions[run_id]
            if not self._subscriptions:
                self._wanted.set()  # the last one: stop listening, unless one comes back

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
                if self.on_cancel is not None:
                    await conn.add_listener(CANCEL_CHANNEL, self._notified)
                failures = 0
                self.connected.set()
                await self._follow(conn)  # wakes every reader if any
                await self._watch(conn)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("lost the LISTEN connection (%s); reconnecting", exc)
            finally:
                self.connected.clear()
                self.following.clear()
                with contextlib.suppress(Exception):
                    await asyncio.shield(conn.close(timeout=2))

    async def _follow(self, conn: Any) -> None:
        """LISTEN to run changes while there are subscriptions, UNLISTEN when there are
        none. A new LISTEN wakes every reader: a change committed before it took effect
        was not notified here, so each reads the store again."""
        self._wanted.clear()
        if self._subscriptions and not self.following.is_set():
            await conn.add_listener(NOTIFY_CHANNEL, self._notified)
            self.following.set()
            self._wake_all()
        elif not self._subscriptions and self.following.is_set():
            await conn.remove_listener(NOTIFY_CHANNEL, self._notified)
            self.following.clear()

    async def _watch(self, conn: Any) -> None:
        """Until the connection is lost: LISTEN or UNLISTEN as subscriptions come and
        go, and a cheap query now and then notices a silent network drop that no
        termination callback reports."""
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            while True:
                wanted = asyncio.ensure_future(self._wanted.wait())
                try:
                    await asyncio.wait(
                        {lost, wanted}, timeout=10.0, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    wanted.cancel()
                if self._lost.is_set() or conn.is_closed():
                    return
                if self._wanted.is_set():
                    await self._follow(conn)
                else:
                    await conn.execute("SELECT 1", timeout=5)
        finally:
            lost.cancel()
