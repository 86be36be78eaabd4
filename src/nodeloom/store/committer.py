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
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

from sqlalchemy import Connection, Row, bindparam, select, text

from nodeloom.store import pgbatch
from nodeloom.store.database import Database
from nodeloom.store.schema import Run, UTCDateTime

# Postgres: every batch notifies this channel with the id of each run it wrote, in its
# transaction (so a notification arrives once the write is visible, and only if it
# commits). Servers following a run executed elsewhere wait for it (nodeloom.fleet.signals).
NOTIFY_CHANNEL = "nodeloom_runs"
_NOTIFY_RUNS = text(
    f"SELECT pg_notify('{NOTIFY_CHANNEL}', id) FROM unnest(CAST(:ids AS text[])) AS changed(id)"
)
MAX_WRITES = 2_000  # writes per transaction
_IN_CHUNK = 500  # ids per `IN (...)` (SQLite's bound-parameter limit is far above it)


class Phase(IntEnum):
    """Where a statement goes in a batch's transaction (inserts before what refers to
    them)."""

    DOCUMENT = 0
    RUN_INSERT = 1
    BLOB = 2
    BLOB_REF = 3
    RUN_UPDATE = 4
    EVENT = 5
    NODE = 6
    RUN_FINISH = 7


@dataclass(eq=False, slots=True)
class Write:
    """One store call's statements, each `(phase, statement, rows)` (rows: executemany
    parameter dicts of one shape per statement). `must_exist`: fail with the run missing
    (`missing`) if `run_id` is not a run when the batch ends. `returns_run`: read the run's
    row back in the transaction (`row`). `explain` turns a driver error of this write,
    executed alone, into the store's error. `events`: the event rows it writes (for the
    `on_commit` listeners)."""

    run_id: str | None
    steps: list[tuple[Phase, Any, list[dict[str, Any]]]]
    must_exist: bool = False
    returns_run: bool = False
    missing: Callable[[], BaseException] | None = None
    explain: Callable[[BaseException], BaseException] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    row: Row[Any] | None = None
    future: asyncio.Future[None] | None = None


class _Missing(Exception):
    def __init__(self, ids: set[str]) -> None:
        super().__init__(", ".join(sorted(ids)))
        self.ids = ids


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
            await self._db.write_sync(lambda conn: execute(conn, batch))
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
        fits = [write for write in batch if _fits(write)]
        expected = [w.run_id for w in fits if w.must_exist and not _refers(w)]
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
        return [write for write in batch if not _fits(write)]

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


def _fits(write: Write) -> bool:
    """Whether a write can go in a batch's one statement: it has a run, does not read it
    back, changes its runs row once at most (the parts of one statement see one snapshot)
    and, if its run must exist, inserts, updates or refers to it."""
    if write.run_id is None or write.returns_run:
        return False
    on_runs = sum(1 for phase, _, _ in write.steps if phase in _ON_RUNS)
    return on_runs == 1 or (on_runs == 0 and (not write.must_exist or _refers(write)))


def _refers(write: Write) -> bool:
    """A row that refers to the run (an event, a checkpoint) proves it exists: its
    foreign key fails otherwise."""
    return any(phase in _REFERRING for phase, _, _ in write.steps)


def merge(batch: Sequence[Write]) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The batch's statements, each with the rows of all its writes, in phase order."""
    merged: dict[tuple[Phase, int], tuple[Any, list[dict[str, Any]]]] = {}
    for write in batch:
        for phase, statement, rows in write.steps:
            key = (phase, id(statement))
            found = merged.get(key)
            if found is None:
                merged[key] = (statement, list(rows))
            else:
                found[1].extend(rows)
    return [merged[key] for key in sorted(merged, key=lambda key: key[0])]


def execute(conn: Connection, batch: Sequence[Write]) -> None:
    """The batch's statements in one transaction (the caller's): merged by statement,
    in phase order; then the existence check and the rows read back."""
    sqlite = conn.dialect.name == "sqlite"
    for statement, rows in merge(batch):
        plan = _compiled(conn, statement, rows[0])
        if sqlite:  # named parameters: the rows go to the driver as they are
            for row in rows:
                for name in plan.times:
                    value = row.get(name)
                    if isinstance(value, datetime):
                        row[name] = _sqlite_time(value)
                for name, value in plan.defaults.items():
                    row.setdefault(name, value)
            conn.exec_driver_sql(plan.sql, rows)  # type: ignore[arg-type]
            continue
        params = [
            tuple(
                _aware_time(value)
                if isinstance(value := row.get(name, plan.defaults.get(name)), datetime)
                else value
                for name in plan.names
            )
            for row in rows
        ]
        conn.exec_driver_sql(plan.sql, params)
    expected = {w.run_id for w in batch if w.must_exist and w.run_id is not None and not _refers(w)}
    if expected:
        found_ids = set()
        for chunk in _chunks(sorted(expected)):
            found_ids.update(conn.scalars(_EXISTING, {"ids": chunk}))
        if expected - found_ids:
            raise _Missing(expected - found_ids)
    if not sqlite:
        changed = sorted({w.run_id for w in batch if w.run_id is not None})
        if changed:
            conn.execute(_NOTIFY_RUNS, {"ids": changed})
    wanted = [w for w in batch if w.returns_run and w.run_id is not None]
    if wanted:
        rows_by_id: dict[str, Row[Any]] = {}
        for chunk in _chunks([w.run_id for w in wanted if w.run_id is not None]):
            for row in conn.execute(_ROWS, {"ids": chunk}):
                rows_by_id[row.id] = row
        for write in wanted:
            assert write.run_id is not None
            write.row = rows_by_id.get(write.run_id)


@dataclass(frozen=True, slots=True)
class _Plan:
    """A statement compiled for the driver: its SQL, its parameter names in order, the
    values of the parameters a row leaves out, and the parameters that hold times."""

    sql: str
    names: list[str]
    defaults: dict[str, Any]
    times: list[str]


_COMPILED: dict[tuple[str, int, tuple[str, ...]], _Plan] = {}
_NAMED: dict[type, Any] = {}


def _compiled(conn: Connection, statement: Any, row: dict[str, Any]) -> _Plan:
    """`statement` compiled for rows with `row`'s keys (once per statement, dialect and
    keys), so that the rows go to the driver's executemany without SQLAlchemy's per-row
    work. SQLite gets named parameters (the row dicts are passed as they are); the
    values a row leaves out are its columns' scalar defaults and the literals of its
    expressions."""
    keys = tuple(row)
    cache_key = (conn.dialect.name, id(statement), keys)
    found = _COMPILED.get(cache_key)
    if found is not None:
        return found
    dialect = conn.dialect
    if dialect.name == "sqlite":
        kind = type(dialect)
        dialect = _NAMED.get(kind) or _NAMED.setdefault(kind, kind(paramstyle="named"))
    compiled = statement.compile(dialect=dialect, column_keys=list(keys), for_executemany=True)
    names = list(compiled.positiontup or compiled.bind_names.values())
    defaults: dict[str, Any] = {}
    table = getattr(statement, "table", None)
    fixed = compiled.params  # the statement's own values (literals in expressions)
    for name in names:
        if name in row:
            continue
        column = table.c.get(name) if table is not None else None
        default = getattr(column, "default", None)
        if default is not None and default.is_scalar:
            defaults[name] = default.arg
        elif fixed.get(name) is not None:
            defaults[name] = fixed[name]
    times = sorted(
        {name for bind, name in compiled.bind_names.items() if isinstance(bind.type, UTCDateTime)}
    )
    found = _Plan(compiled.string, names, defaults, times)
    _COMPILED[cache_key] = found
    return found


def _sqlite_time(value: datetime) -> str:
    """A time as the store's SQLite columns hold it (UTC, naive, always with microseconds:
    SQLAlchemy's format, so that times compare as text)."""
    if value.tzinfo is not None:
        if value.tzinfo is not UTC and value.utcoffset():
            value = value.astimezone(UTC)
        value = value.replace(tzinfo=None)
    text = value.isoformat(" ")
    return text if value.microsecond else text + ".000000"


def _aware_time(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


_REFERRING = (Phase.EVENT, Phase.NODE, Phase.BLOB_REF)
_ON_RUNS = (Phase.RUN_INSERT, Phase.RUN_UPDATE, Phase.RUN_FINISH)
_IDS = bindparam("ids", expanding=True)
_EXISTING = select(Run.id).where(Run.id.in_(_IDS))
_ROWS = select(Run).where(Run.id.in_(_IDS))


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[start : start + _IN_CHUNK] for start in range(0, len(items), _IN_CHUNK)]


def _explain(write: Write, exc: BaseException) -> BaseException:
    if isinstance(exc, _Missing) and write.missing is not None:
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
