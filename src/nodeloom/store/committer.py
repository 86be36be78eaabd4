"""Group commit across runs: the writes of every run of a process, in few transactions.

A store call that records something about a run (`create_run`, `write_batch`,
`update_run`, `finish_run`) becomes a `Write`: the statements it needs, each with its rows,
tagged with a phase. The Committer queues the writes of every caller and one task executes
whatever has gathered in ONE transaction (on a SQLite file, on the event loop's thread):

    documents -> runs inserted -> blobs -> blob refs -> runs updated -> events
    -> checkpoints -> runs finished -> existence check -> rows read back

The rows of one statement from all the writes of a batch go in one `executemany`. On
Postgres the writes that fit go in ONE statement instead, one round trip with no BEGIN
nor COMMIT (`nodeloom.store.pgbatch`); the others take this transaction. A batch holds at
most one write per run, so the merged order changes nothing a run can see; a second
write of the same run waits for the next batch (and every later one behind it).

When the transaction commits, `on_commit` listeners are called with the batch (the one
place where a batch of events becomes committed; see `Store.on_commit`), then every
waiter is released: a write's future resolves only once it is committed. If the batch
fails, it is rolled back whole and each of its writes is executed again in a transaction
of its own, so a bad write (an unknown run, a duplicate id) fails alone, with its own
error.

No timer: a batch is what gathered while the previous one was being written (the writes
handed over in one turn of the event loop after a quiet spell go at once, together),
capped at MAX_WRITES writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from collections.abc import Callable, Sequence

from nodeloom.store import pgbatch
from nodeloom.store.database import Database
from nodeloom.store.statements import NOTIFY_CHANNEL, execute, execute_sqlite, reads_back
from nodeloom.store.writes import Missing, Phase, Write, fits_one_statement, merge, refers

__all__ = ["NOTIFY_CHANNEL", "CommitListener", "Committer", "Phase", "Write"]

MAX_WRITES = 2_000  # writes per transaction


CommitListener = Callable[[Sequence[Write]], None]


class Committer:
    """The store's one writer of run records (see the module docstring)."""

    def __init__(self, db: Database, max_writes: int = MAX_WRITES) -> None:
        self._db = db
        self.max_writes = max_writes
        self.listeners: list[CommitListener] = []
        self._queue: list[Write] = []
        self._task: asyncio.Task[None] | None = None
        self.batches = 0  # transactions committed (for tests and benchmarks)
        self.writes = 0  # writes committed
        # Postgres: batches in one statement on a connection of its own (store.pgbatch)
        self.one_statement = (
            None
            if db.is_sqlite
            else pgbatch.PgBatch(db.writer.url, db.writer.dialect, NOTIFY_CHANNEL)
        )

    async def submit(self, write: Write) -> Write:
        """Queue `write` and wait until it is committed (its `row` filled in if asked);
        raises its error, the store's, if it could not be. A caller cancelled while
        waiting does not withdraw the write."""
        loop = asyncio.get_running_loop()
        write.future = loop.create_future()
        self._queue.append(write)
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            # The task lives while there is work; it starts on the next turn of the loop,
            # so the writes handed over in this turn share its first transaction.
            self._task = loop.create_task(self._drain(), name="nodeloom-store-committer")
        # Not shielded: a cancelled caller cancels only its future (settling a done
        # future is skipped); the write stays in the queue or the batch all the same.
        await write.future
        return write

    async def aclose(self) -> None:
        """Wait until what is queued is written."""
        task = self._task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await asyncio.gather(task, return_exceptions=True)
        self._task = None
        if self.one_statement is not None:
            await self.one_statement.close()

    async def _drain(self) -> None:
        while self._queue:
            await self._commit(self._take())

    def _take(self) -> list[Write]:
        """The next batch: queued writes in order, one per run (a later write of a run
        already in the batch stays queued, with every later write of that run)."""
        batch: list[Write] = []
        rest: list[Write] = []
        runs: set[str] = set()
        held: set[str] = set()
        for write in self._queue:
            key = write.run_id
            if len(batch) >= self.max_writes or (key is not None and (key in runs or key in held)):
                rest.append(write)
                if key is not None:
                    held.add(key)
                continue
            batch.append(write)
            if key is not None:
                runs.add(key)
        self._queue = rest
        return batch

    async def _commit(self, batch: list[Write]) -> None:
        if self.one_statement is not None:
            batch = await self._commit_one_statement(batch)
            if not batch:
                return
        try:
            bare = None
            if self._db.is_sqlite and not reads_back(batch):
                dialect = self._db.writer.dialect
                bare = functools.partial(execute_sqlite, dialect=dialect, batch=batch)
            await self._db.write_sync(functools.partial(execute, batch=batch), bare=bare)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                for write in batch:
                    _settle(write, exc)
                raise
            if len(batch) > 1:
                for write in batch:  # each alone: only the bad one fails
                    await self._commit([write])
                return
            _settle(batch[0], _explain(batch[0], exc))
            return
        self._committed(batch)

    async def _commit_one_statement(self, batch: list[Write]) -> list[Write]:
        """Postgres: commit the writes of `batch` that fit in one statement (see
        `nodeloom.store.pgbatch`); returns the writes left for a transaction (all of them
        if the statement failed: it wrote nothing)."""
        assert self.one_statement is not None
        fits = [write for write in batch if fits_one_statement(write)]
        expected = [w.run_id for w in fits if w.must_exist and not refers(w)]
        changed = [w.run_id for w in fits]
        try:
            done = bool(fits) and await self.one_statement.write(merge(fits), changed, expected)
        except asyncio.CancelledError as exc:
            for write in batch:
                _settle(write, exc)
            raise
        except Exception:
            return batch  # the usual way: a transaction, then write by write
        if not done:
            return batch
        self._committed(fits)
        return [write for write in batch if not fits_one_statement(write)]

    def _committed(self, batch: list[Write]) -> None:
        self.batches += 1
        self.writes += len(batch)
        for listener in list(self.listeners):
            try:
                listener(batch)
            except Exception as exc:  # a listener never fails the writes
                print(f"nodeloom: a store commit listener failed: {exc!r}", file=sys.stderr)
        for write in batch:
            _settle(write, None)


def _explain(write: Write, exc: BaseException) -> BaseException:
    if isinstance(exc, Missing) and write.missing is not None:
        return write.missing()
    if write.explain is not None:
        with contextlib.suppress(Exception):
            return write.explain(exc)
    return exc


def _settle(write: Write, exc: BaseException | None) -> None:
    # The future holds no reference back to the write (its result is None, and it is
    # dropped from the write): no reference cycle, so a committed write is freed by
    # reference counting, not left for the cyclic collector.
    future, write.future = write.future, None
    if future is None or future.done():
        return
    if exc is None:
        future.set_result(None)
    elif isinstance(exc, asyncio.CancelledError):
        future.cancel()
    else:
        future.set_exception(exc)
