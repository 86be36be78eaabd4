"""A group-commit batch on Postgres as ONE statement, in one round trip.

The committer's batch is a handful of statements (runs inserted, events, checkpoints,
runs updated and ended...), each with the rows of many writes. Here each becomes a
data-modifying CTE reading its rows from one JSON parameter (`json_to_recordset`: the
rows encoded by the C JSON encoder, parsed by the server; no per-value work in Python or
in the driver), and the statement ends with the notification of every run it wrote and,
when writes must find their run, a check that fails the statement if one did not:

    WITH s0 AS (INSERT INTO runs (id, ...) SELECT _v."id", ...
                FROM json_to_recordset($1::json) AS _v("id" text, ...) RETURNING runs.id),
         s1 AS (UPDATE runs SET status=_v."new_status" FROM json_to_recordset($2::json)
                AS _v(...) WHERE runs.id = _v."run_key" RETURNING runs.id),
         s2 AS (INSERT INTO events ... ON CONFLICT DO NOTHING)
    SELECT count(pg_notify('nodeloom_runs', c.id)) / <1, or 0 if a run is missing>
    FROM unnest($4::text[]) AS c(id)

One statement is atomic without BEGIN and COMMIT (an implicit transaction): it commits
whole or not at all, and its notifications are delivered only if it commits. Foreign keys
are checked at the end of the statement, so a run and its events go in together. It is
sent on a connection of its own (no pool checkout, no SQLAlchemy), prepared once per
batch shape (asyncpg's statement cache).

What does not fit goes the committer's usual way (`committer._fits`): a write that
changes its runs row twice (the parts of one statement all see the snapshot taken
before it, and must not change one row twice), one that reads its run back, one with no
run, a statement this module cannot rewrite. Any error sends the batch the usual way too
(nothing of it was written): the committer executes it again in a transaction, then
write by write, so that each error is the store's, as before.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Float, Integer, Numeric, String
from sqlalchemy.engine import URL
from sqlalchemy.engine.interfaces import BindTyping, Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

RUNS = "runs"
_PLACEHOLDER = re.compile(r"(?<![:\w]):(\w+)")
NO_TABLE_SCANS = {"enable_hashjoin": "off", "enable_mergejoin": "off"}  # see `_connect`
_ADAPTER_ONLY = ("prepared_statement_cache_size", "prepared_statement_name_func", "async_fallback")


@dataclass(frozen=True, slots=True)
class Part:
    """One statement of a batch as the body of a CTE, its rows given as one JSON array:
    `body` holds `{rows}` (where `json_to_recordset(...) AS _v(<columns>)` goes) and
    `{c0}`, `{c1}`... (the parameters a row leaves out: a column's default, a literal of
    the statement, each one parameter, `constants`). `runs`: it inserts or updates runs
    rows (and returns their ids)."""

    body: str
    columns: str
    constants: tuple[tuple[Any, str], ...]
    runs: bool

    def sql(self, first: int) -> str:
        """Its SQL, its parameters numbered from `first`: the rows, then the constants."""
        numbered = {
            f"c{i}": f"${first + 1 + i}::{kind}" for i, (_, kind) in enumerate(self.constants)
        }
        rows = f"json_to_recordset(${first}::json) AS _v({self.columns})"
        return self.body.format(rows=rows, **numbered)

    def arguments(self, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """Its parameters' values: the rows as JSON (times as ISO text with their offset,
        UTC if they have none), then the constants."""
        return [_ENCODER.encode(rows), *(value for value, _ in self.constants)]


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat() if value.tzinfo is not None else f"{value.isoformat()}+00:00"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


_ENCODER = json.JSONEncoder(
    default=_iso, separators=(",", ":"), ensure_ascii=False, check_circular=False
)
# (id of the statement, row keys) -> (the statement, kept so that its id is not reused,
# and its part)
_PARTS: dict[tuple[int, tuple[str, ...]], tuple[Any, Part | None]] = {}


def part(dialect: Dialect, statement: Any, row: dict[str, Any]) -> Part | None:
    """`statement` (an INSERT or an UPDATE ... WHERE) as the body of a CTE fed by JSON,
    for rows with `row`'s keys (once per statement and keys); None if it does not fit."""
    keys = tuple(row)
    cache_key = (id(statement), keys)
    entry = _PARTS.get(cache_key)
    if entry is not None and entry[0] is statement:
        return entry[1]
    found = _build(dialect, statement, keys)
    _PARTS[cache_key] = (statement, found)
    return found


def _build(dialect: Dialect, statement: Any, keys: tuple[str, ...]) -> Part | None:
    table = getattr(statement, "table", None)
    insert, update = getattr(statement, "is_insert", False), getattr(statement, "is_update", False)
    if table is None or not (insert or update):
        return None
    named = type(dialect)(paramstyle="named")
    named.bind_typing = BindTyping.NONE  # `:name`, no `::TYPE` casts
    compiled = statement.compile(dialect=named, column_keys=list(keys), for_executemany=True)
    sql: str = compiled.string
    if any(char in sql for char in "'\"{}"):  # literals, quoted names: not rewritten
        return None
    binds = {name: bind for bind, name in compiled.bind_names.items()}
    names = tuple(dict.fromkeys(m.group(1) for m in _PLACEHOLDER.finditer(sql)))
    if not names or any(name not in binds for name in names):
        return None
    kinds = {name: _kind(binds[name].type) for name in names}
    if any(kind is None for kind in kinds.values()):
        return None
    given = [name for name in names if name in keys]
    constants: list[tuple[Any, str]] = []
    values: dict[str, str] = {}
    for name in names:
        if name in keys:
            values[name] = f'_v."{name}"'
            continue
        column = table.c.get(name)
        default = getattr(column, "default", None)
        value = default.arg if default is not None and default.is_scalar else None
        if value is None:
            value = compiled.params.get(name)
        values[name] = f'COALESCE(_v."{name}", {{c{len(constants)}}})'
        constants.append((value, str(kinds[name])))
        given.append(name)
    body = _PLACEHOLDER.sub(lambda m: values[m.group(1)], sql)
    runs = table.name == RUNS
    if insert:
        head, exprs, tail = _split_values(body)
        if head is None:
            return None
        body = f"{head} SELECT {exprs} FROM {{rows}}{tail}"
    else:
        if body.count(" WHERE ") != 1:
            return None
        head, where = body.split(" WHERE ")
        body = f"{head} FROM {{rows}} WHERE {where}"
    if runs:
        body += f" RETURNING {RUNS}.id"
    columns = ", ".join(f'"{name}" {kinds[name]}' for name in given)
    return Part(body, columns, tuple(constants), runs)


def _split_values(sql: str) -> tuple[str | None, str, str]:
    """`INSERT INTO t (cols) VALUES (exprs) rest` -> (`INSERT INTO t (cols)`, exprs, rest)."""
    head, found, rest = sql.partition(" VALUES (")
    if not found:
        return None, "", ""
    depth = 1
    for position, char in enumerate(rest):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return head, rest[:position], rest[position + 1 :]
    return None, "", ""


def _kind(kind: TypeEngine[Any]) -> str | None:
    """The Postgres type a parameter is read as (no lengths: a cast to varchar(n) would
    cut a long value, where inserting it fails as it should)."""
    while isinstance(kind, TypeDecorator):
        kind = kind.impl_instance
    if isinstance(kind, Boolean):
        return "bool"
    if isinstance(kind, Integer):
        return "int8"
    if isinstance(kind, Float):
        return "float8"
    if isinstance(kind, Numeric):
        return "numeric"
    if isinstance(kind, DateTime):
        return "timestamptz" if kind.timezone else "timestamp"
    if isinstance(kind, String):
        return "text"
    return None


_STATEMENTS: dict[tuple[Any, ...], str] = {}


def statement(channel: str, parts: Sequence[Part], checked: bool) -> str:
    """The one statement of a batch made of `parts` (in order): each a CTE, then the
    notification of the ids in the last-but-one array and, if `checked`, the check that
    every id of the last array was inserted or updated by a part on runs."""
    key = (channel, tuple(id(p) for p in parts), checked)
    found = _STATEMENTS.get(key)
    if found is not None:
        return found
    ctes = []
    first = 1
    for index, each in enumerate(parts):
        ctes.append(f"s{index} AS ({each.sql(first)})")
        first += 1 + len(each.constants)
    notified = f"count(pg_notify('{channel}', c.id))"
    if checked:
        written = " UNION ALL ".join(f"SELECT id FROM s{i}" for i, p in enumerate(parts) if p.runs)
        notified += (
            f" / (SELECT CASE WHEN count(*) = 0 THEN 1 ELSE 0 END FROM unnest(${first + 1}"
            f"::text[]) AS e(id) WHERE e.id NOT IN ({written}))"
        )
    found = f"WITH {', '.join(ctes)} SELECT {notified} FROM unnest(${first}::text[]) AS c(id)"
    _STATEMENTS[key] = found
    return found


class PgBatch:
    """Writes batches as one statement each, on a connection of its own (opened when
    first needed, opened again when it died)."""

    def __init__(self, url: URL, dialect: Dialect, channel: str) -> None:
        self._url = url
        self.dialect = dialect
        self._channel = channel
        self._connection: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.statements = 0  # batches written in one statement (for tests and benchmarks)

    async def write(
        self,
        merged: Sequence[tuple[Any, list[dict[str, Any]]]],
        changed: list[Any],
        expected: list[Any],
    ) -> bool:
        """Execute a batch's statements, each with its rows (`merged`), in one statement
        that notifies `changed` and fails if a run of `expected` was neither inserted nor
        updated by it. False, with nothing sent, if a statement does not fit."""
        parts = []
        for each, rows in merged:
            found = part(self.dialect, each, rows[0])
            if found is None:
                return False
            parts.append((found, rows))
        if expected and not any(each.runs for each, _ in parts):
            return False
        sql = statement(self._channel, [each for each, _ in parts], bool(expected))
        args: list[Any] = []
        for each, rows in parts:
            args.extend(each.arguments(rows))
        args.append(changed)
        if expected:
            args.append(expected)
        connection = await self._connect()
        try:
            await connection.execute(sql, *args)
        except BaseException as exc:
            import asyncpg

            # A server error leaves the connection usable (the statement rolled back);
            # anything else (it died, a cancelled wait) may not: a new one next time.
            if not isinstance(exc, asyncpg.PostgresError):
                self._drop()
            raise
        self.statements += 1
        return True

    async def _connect(self) -> Any:
        import asyncpg

        loop = asyncio.get_running_loop()
        if self._connection is not None and (
            self._loop is not loop or self._connection.is_closed()
        ):
            self._drop()
        if self._connection is None:
            args, kwargs = self.dialect.create_connect_args(self._url)
            for name in _ADAPTER_ONLY:
                kwargs.pop(name, None)
            # A batch of many statement shapes is a long statement: prepare it once too
            # (asyncpg prepares a statement over 15 KB at every use by default).
            kwargs.setdefault("max_cacheable_statement_size", 256 * 1024)
            # Its statements find runs rows by primary key, joined to a JSON parameter
            # whose length the planner cannot know (it assumes 100 rows): with hash and
            # merge joins allowed it scans the whole runs table at every batch that
            # updates a run (0.79 ms at 3,000 runs, growing with the table); as nested
            # loops they are index lookups (0.06 ms).
            settings = {**kwargs.get("server_settings", {}), **NO_TABLE_SCANS}
            kwargs["server_settings"] = settings
            self._connection = await asyncpg.connect(*args, **kwargs)
            self._loop = loop
        return self._connection

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and not connection.is_closed():
            connection.terminate()

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None or connection.is_closed():
            return
        if self._loop is asyncio.get_running_loop():
            try:
                await asyncio.wait_for(connection.close(), 5)
                return
            except Exception:
                pass
        connection.terminate()
