"""Scheduling one graph run: the ready queue, the workers, the concurrency cap, the
waiting accounting, and cancelling everything when the run fails.

Ready nodes are executed by workers, at most `max_concurrency` at a time. A worker that
finishes a node continues with one of the nodes that became ready (no task per node on a
chain) and starts new workers for the others; the calling task is a worker too, so a chain
runs without creating any task. A node waiting for a person holds no concurrency slot.
The first failure cancels every other worker (its node's subprocess is killed); the run
goes on to its end state. Both a failure and `drain()` close the scheduler: no node starts
any more (ready nodes stay queued); a drained run stops once no node is running.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nodeloom.engine.failures import internal_error
from nodeloom.engine.human import HumanInput


class Scheduler(ABC):
    """Runs `run_node(index)` for every index put on `ready`, until none is left or the
    run failed (`failure`). A base class: a graph run (`FlowRun`) is its own scheduler
    and provides `run_node` (one object per graph run, not two)."""

    __slots__ = (
        "_done",
        "_inline",
        "_inline_cancelled",
        "blocked",
        "cap",
        "closed",
        "failure",
        "head",
        "human",
        "inner",
        "ready",
        "running",
        "tasks",
    )

    def __init__(self, max_concurrency: int, human: HumanInput | None, inner: bool) -> None:
        self.inner = inner  # the graph run of a Loop body (inside another graph run)
        self.cap = max_concurrency
        self.human = human  # the run's waiting nodes (when its plan has nodes that may wait)
        # The ready queue, first in first out: `ready[head:]`. A list and an index rather
        # than a deque (760 bytes from the first node on: the largest object of a small
        # run); `ready` is emptied whenever `head` reaches its end, so `if ready` is "is
        # anything ready" and the list stays as short as the run's widest moment.
        self.ready: list[int] = []
        self.head = 0
        self.running = 0
        self.blocked = 0  # workers waiting for human input: they hold no concurrency slot
        self.tasks: set[asyncio.Task[None]] | None = None  # made when the first is started
        self.failure: dict[str, Any] | None = None
        self.closed = False  # no node starts any more: the run failed, or it drains
        self._done: asyncio.Future[None] | None = None
        self._inline: asyncio.Task[Any] | None = None  # the task run_ready() runs a worker in
        self._inline_cancelled = False  # fail() cancelled it (not whoever awaits run_ready())

    def _popleft(self) -> int:
        """The first node of the ready queue, taken off it (`ready.pop()` when it is the
        only one: `head` is 0 then)."""
        ready, head = self.ready, self.head
        index = ready[head]
        head += 1
        if head == len(ready):
            ready.clear()
            head = 0
        self.head = head
        return index

    @abstractmethod
    async def run_node(self, index: int) -> None:
        """Execute the node `index` (the graph run's job)."""

    async def run_ready(self) -> None:
        """Run what is ready, and what becomes ready, to the end (or the first failure).

        The calling task is the first worker (`_worker`'s loop, written out here so that a
        run has no coroutine frame more than it needs). A failure elsewhere cancels it like
        any worker (its node's subprocess is killed); that cancellation ends here, the
        caller's own (a run cancelled, a timeout) goes on."""
        ready = self.ready
        if not ready or self.closed:
            return
        index = ready.pop() if len(ready) == 1 else self._popleft()
        self.running += 1
        human = self.human
        if human is not None:
            human.active += 1
        try:
            if ready:
                self._spawn()
            task = self._inline = asyncio.current_task()
            run_node = self.run_node
            try:
                while True:
                    await run_node(index)
                    if self.closed or not ready:
                        break
                    index = ready.pop() if len(ready) == 1 else self._popleft()
                    if ready:
                        self._spawn()
            except asyncio.CancelledError:
                if not self._inline_cancelled or task is None or task.uncancel() > 0:
                    raise
            except BaseException as exc:  # an engine bug: fail the run, do not hang it
                self.fail(internal_error(exc))
            else:
                if self._inline_cancelled and task is not None:
                    task.uncancel()  # a node swallowed the cancellation: balance the count
            finally:
                self._inline = None
            self.running -= 1
            if human is not None:
                human.active -= 1
                self._check_paused(human)
            if self.running:
                self._done = asyncio.get_running_loop().create_future()
                await self._done
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Cancel every running worker and wait until they have all finished."""
        tasks = list(self.tasks or ())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def fail(self, payload: dict[str, Any]) -> None:
        """The run failed (the first failure wins): cancel every other worker."""
        if self.failure is not None:
            return
        self.failure = payload
        self.closed = True
        current = asyncio.current_task()
        for task in self.tasks or ():
            if task is not current:
                task.cancel()
        inline = self._inline
        if inline is not None and inline is not current and not inline.done():
            self._inline_cancelled = True
            inline.cancel()

    def drain(self) -> None:
        """Start no more nodes: the running ones finish, the ready ones stay queued (not
        started, so not recorded as started). The run stops once none is running."""
        self.closed = True

    @property
    def drained(self) -> bool:
        """`drain()` stopped the run before its end: none of its nodes runs (or waits for
        a person: the run pauses then) and nodes were left ready, unstarted."""
        return self.closed and self.failure is None and self.running == 0 and bool(self.ready)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A node waits for a person: it gives its concurrency slot to a ready node."""
        self.blocked += 1
        if self.ready:
            self._spawn()
        try:
            yield
        finally:
            self.blocked -= 1

    def suspend(self) -> None:
        """A node (a Loop) waits on its inner graphs: for pausing, it is not executing."""
        if self.human is not None:
            self.human.active -= 1

    def unsuspend(self) -> None:
        """The node's last inner graph ended: it executes again."""
        if self.human is not None:
            self.human.active += 1

    def _check_paused(self, human: HumanInput) -> None:
        """Is the run paused now? Not asked when a Loop body's last worker ends: the Loop
        is about to count as executing again (`unsuspend`), not waiting."""
        if not self.inner or self.running > 0:
            human.check()

    # -- workers --------------------------------------------------------------------------

    def _spawn(self) -> None:
        cap = self.cap + self.blocked
        create = asyncio.get_running_loop().create_task
        human = self.human
        tasks = self.tasks
        if tasks is None:
            tasks = self.tasks = set()
        while self.ready and self.running < cap and not self.closed:
            index = self._popleft()
            self.running += 1
            if human is not None:
                human.active += 1
            task = create(self._worker(index))
            tasks.add(task)
            task.add_done_callback(self._worker_done)

    async def _worker(self, index: int) -> None:
        run_node, ready = self.run_node, self.ready
        try:
            while True:
                await run_node(index)
                if self.closed or not ready:
                    break
                index = ready.pop() if len(ready) == 1 else self._popleft()
                if ready:
                    self._spawn()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # an engine bug: fail the run, do not hang it
            self.fail(internal_error(exc))

    def _worker_done(self, task: asyncio.Task[None]) -> None:
        # A callback, not a `finally`: a worker cancelled before it started never runs its
        # body, but its callback still runs.
        self.tasks.discard(task)  # type: ignore[union-attr]
        self.running -= 1
        human = self.human
        if human is not None:
            human.active -= 1
            self._check_paused(human)
        if self.running == 0 and (self.closed or not self.ready):
            done = self._done
            if done is not None and not done.done():
                done.set_result(None)
