"""A group-commit batch's statements executed in its transaction: merged by statement
(`writes.merge`), each compiled once per shape for the driver's `executemany`, then the
existence check and the rows read back.

Two ways in: `execute` on a SQLAlchemy connection (any database), and `execute_sqlite` on
a bare sqlite3 connection (the SQLite file's writer on the event loop's thread,
`nodeloom.store.inline`): the same SQL and rows without SQLAlchemy's work per statement
(about 40 µs each, three or more per batch), for a batch that reads no row back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, text
from sqlalchemy.engine.interfaces import Dialect

from nodeloom.store.schema import Run, UTCDateTime
from nodeloom.store.writes import Missing, Write, checked, merge

# Postgres: every batch notifies this channel with the id of each run it wrote, in its
# transaction (so a notification arrives once the write is visible, and only if it
# commits). Servers following a run executed elsewhere wait for it (nodeloom.fleet.signals).
NOTIFY_CHANNEL = "nodeloom_runs"
_NOTIFY_RUNS = text(
    f"SELECT pg_notify('{NOTIFY_CHANNEL}', id) FROM unnest(CAST(:ids AS text[])) AS changed(id)"
)
_IN_CHUNK = 500  # ids per `IN (...)` (SQLite's bound-parameter limit is far above it)
_IDS = bindparam("ids", expanding=True)
_EXISTING = select(Run.id).where(Run.id.in_(_IDS))
_ROWS = select(Run).where(Run.id.in_(_IDS))


def execute(conn: Connection, batch: Sequence[Write]) -> None:
    """The batch's statements in one transaction (the caller's): merged by statement,
    in phase order; then the existence check and the rows read back."""
    sqlite = conn.dialect.name == "sqlite"
    for statement, rows in merge(batch):
        plan = compiled(conn.dialect, statement, rows[0])
        if sqlite:  # named parameters: the rows go to the driver as they are
            conn.exec_driver_sql(plan.sql, plan.sqlite_rows(rows))  # type: ignore[arg-type]
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
    expected = checked(batch)
    if expected:
        found_ids = set()
        for chunk in _chunks(sorted(expected)):
            found_ids.update(conn.scalars(_EXISTING, {"ids": chunk}))
        if expected - found_ids:
            raise Missing(expected - found_ids)
    if not sqlite:
        changed = sorted({w.run_id for w in batch if w.run_id is not None})
        if changed:
            conn.execute(_NOTIFY_RUNS, {"ids": changed})
    wanted = [w for w in batch if w.returns_run and w.run_id is not None]
    if wanted:
        rows_by_id = {}
        for chunk in _chunks([w.run_id for w in wanted if w.run_id is not None]):
            for row in conn.execute(_ROWS, {"ids": chunk}):
                rows_by_id[row.id] = row
        for write in wanted:
            assert write.run_id is not None
            write.row = rows_by_id.get(write.run_id)


def reads_back(batch: Sequence[Write]) -> bool:
    """Whether a write of the batch reads its run's row back (`execute_sqlite` does not)."""
    return any(write.returns_run for write in batch)


def execute_sqlite(
    connection: sqlite3.Connection, dialect: Dialect, batch: Sequence[Write]
) -> None:
    """`execute` on a bare sqlite3 connection, in its transaction (the caller's), for a
    batch that reads no row back (`reads_back`)."""
    for statement, rows in merge(batch):
        plan = compiled(dialect, statement, rows[0])
        connection.executemany(plan.sql, plan.sqlite_rows(rows))
    expected = checked(batch)
    found: set[str] = set()
    for chunk in _chunks(sorted(expected)):
        marks = ",".join("?" * len(chunk))
        query = f"SELECT id FROM runs WHERE id IN ({marks})"
        found.update(row[0] for row in connection.execute(query, chunk))
    if expected - found:
        raise Missing(expected - found)  # all of them, as `execute` does


@dataclass(frozen=True, slots=True)
class Plan:
    """A statement compiled for the driver: its SQL, its parameter names in order, the
    values of the parameters a row leaves out, and the parameters that hold times."""

    sql: str
    names: list[str]
    defaults: dict[str, Any]
    times: list[str]

    def sqlite_rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`rows`, completed in place for SQLite's named parameters: times as text, the
        parameters a row leaves out filled in."""
        for row in rows:
            for name in self.times:
                value = row.get(name)
                if isinstance(value, datetime):
                    row[name] = sqlite_time(value)
            for name, value in self.defaults.items():
                row.setdefault(name, value)
        return rows


# (dialect, id of the statement, row keys) -> (the statement, kept so that its id is not
# reused by another, and its plan)
_COMPILED: dict[tuple[str, int, tuple[str, ...]], tuple[Any, Plan]] = {}
_NAMED: dict[type, Any] = {}


def compiled(dialect: Dialect, statement: Any, row: dict[str, Any]) -> Plan:
    """`statement` compiled for rows with `row`'s keys (once per statement, dialect and
    keys), so that the rows go to the driver's executemany without SQLAlchemy's per-row
    work. SQLite gets named parameters (the row dicts are passed as they are); the
    values a row leaves out are its columns' scalar defaults and the literals of its
    expressions."""
    keys = tuple(row)
    cache_key = (dialect.name, id(statement), keys)
    found = _COMPILED.get(cache_key)
    if found is not None and found[0] is statement:
        return found[1]
    if dialect.name == "sqlite":
        kind = type(dialect)
        dialect = _NAMED.get(kind) or _NAMED.setdefault(kind, kind(paramstyle="named"))
    result = statement.compile(dialect=dialect, column_keys=list(keys), for_executemany=True)
    names = list(result.positiontup or result.bind_names.values())
    defaults: dict[str, Any] = {}
    table = getattr(statement, "table", None)
    fixed = result.params  # the statement's own values (literals in expressions)
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
        {name for bind, name in result.bind_names.items() if isinstance(bind.type, UTCDateTime)}
    )
    plan = Plan(result.string, names, defaults, times)
    _COMPILED[cache_key] = (statement, plan)
    return plan


def sqlite_time(value: datetime) -> str:
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


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[start : start + _IN_CHUNK] for start in range(0, len(items), _IN_CHUNK)]
