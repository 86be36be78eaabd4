"""Database Query: one statement in its own transaction on a pooled connection.

The statement's values are bound as parameters (`:name`), so they stay data whatever
they hold. Unless `allow_write`, the transaction is read-only by the database's own rule
(see `dialects`) and rolled back; with it, committed. Rows are streamed and at most
`max_rows` are read.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import decimal
import json
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import URL, Connection

from nodeloom.errors import NodeError
from nodeloom.nodes.integration.database_query.definition import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT,
)
from nodeloom.nodes.integration.database_query.dialects import (
    classify,
    database_url,
    prepare,
    reason,
    release,
)
from nodeloom.nodes.integration.database_query.pools import engine_for
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext
from nodeloom.values import kind_of

# The database cancels the statement at `timeout`; this much later the node gives up
# waiting for it to say so.
GRACE = 2.0
TIMEOUT_MARGIN = 0.1


class DatabaseQueryExecutor:
    node_type = "database-query"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        url = database_url(data.get("connection"))
        query = data.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _invalid("query", "Database Query needs `query`: one SQL statement.")
        if "{{" in query:
            raise _invalid(
                "query",
                "the SQL text must not hold {{ }}; write :name and give the value in `parameters`.",
            )
        statement = text(query)
        params = _parameters(data.get("parameters"), set(statement.compile().params))
        allow_write = data.get("allow_write") or False
        if not isinstance(allow_write, bool):
            raise _invalid(
                "allow_write", f"allow_write must be true or false; got {kind_of(allow_write)}."
            )
        max_rows = _number(data, "max_rows", DEFAULT_MAX_ROWS, 1, 100_000, integer=True)
        timeout = _number(data, "timeout", DEFAULT_TIMEOUT, 0.1, 3600)
        # `timeout` is also the engine's per-node timeout: the database gets a little less,
        # so that its own, clearer, cancellation comes first.
        budget = timeout - min(TIMEOUT_MARGIN, timeout / 20)
        try:
            async with asyncio.timeout(budget + GRACE):
                output = await _run(url, statement, params, allow_write, max_rows, budget)
        except TimeoutError:
            raise _timeout(timeout) from None
        except NodeError:
            raise
        except Exception as exc:  # the drivers' errors are not all wrapped by SQLAlchemy
            raise _database_error(exc, url, timeout) from None
        return ExecutionResult({"output": output})


async def _run(
    url: URL,
    statement: Any,
    params: dict[str, Any],
    allow_write: bool,
    max_rows: int,
    timeout: float,
) -> dict[str, Any]:
    engine = await engine_for(url)
    async with engine.connect() as connection:
        raw = await prepare(connection, read_only=not allow_write, timeout=timeout)
        try:
            output = await connection.run_sync(_fetch, statement, params, max_rows, not allow_write)
            if allow_write:
                await connection.commit()
            else:
                await connection.rollback()
        finally:
            await release(connection, raw)
    return output


def _fetch(
    connection: Connection, statement: Any, params: dict[str, Any], max_rows: int, stream: bool
) -> Any:
    """Run the statement and read at most `max_rows` + 1 rows (runs under `run_sync`).

    A read streams its rows from a server-side cursor. A write does not: drivers report
    the rows it changed only for a plain cursor (its RETURNING rows are read whole)."""
    result = connection.execution_options(stream_results=stream).execute(statement, params)
    try:
        if not result.returns_rows:  # a write: how many rows it changed
            return {"rows": [], "row_count": max(result.rowcount, 0), "truncated": False}
        columns = list(result.keys())
        fetched = result.fetchmany(max_rows + 1)
    finally:
        result.close()
    rows = [dict(zip(columns, map(to_json, row), strict=True)) for row in fetched[:max_rows]]
    return {"rows": rows, "row_count": len(rows), "truncated": len(fetched) > max_rows}


def to_json(value: Any) -> Any:
    """A column value as JSON: numbers, text, ISO dates, base64 bytes."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items()}
    return str(value)


def _parameters(value: Any, names: set[str]) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise _invalid(
            "parameters", f'parameters must be an object such as {{"id": 7}}; got {kind_of(value)}.'
        )
    used = ", ".join(f":{name}" for name in sorted(names)) or "none"
    missing = sorted(names - set(value))
    if missing:
        raise _invalid(
            "parameters",
            f"the query uses {', '.join(':' + n for n in missing)} but `parameters` has no "
            f"value for it; add {', '.join(repr(n) for n in missing)} to `parameters`.",
        )
    unused = sorted(set(value) - names)
    if unused:
        raise _invalid(
            "parameters",
            f"`parameters` has {', '.join(map(repr, unused))}, which the query does not use "
            f"(it uses {used}); remove it or write it in the query as :name.",
        )
    return {
        name: json.dumps(item, ensure_ascii=False) if isinstance(item, (dict, list)) else item
        for name, item in value.items()
    }


def _number(
    data: Mapping[str, Any],
    field: str,
    default: float,
    minimum: float,
    maximum: float,
    *,
    integer: bool = False,
) -> Any:
    value = data.get(field)
    if value is None:
        return default
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and integer and isinstance(value, float):
        ok = value.is_integer()
    if not ok or not minimum <= value <= maximum:
        kind = "an integer" if integer else "a number"
        raise _invalid(
            field, f"{field} must be {kind} from {minimum:g} to {maximum:g}; got {value!r}."
        )
    return int(value) if integer else float(value)


def _database_error(exc: BaseException, url: URL, timeout: float) -> NodeError:
    kind = classify(exc)
    where = url.render_as_string(hide_password=True)
    if kind == "read_only":
        return NodeError(
            f"the statement tried to change data, and Database Query is read-only unless "
            f"allow_write is on ({reason(exc)}). Set allow_write: true on this node if it "
            "is meant to write.",
            code="database_read_only",
            retryable=False,
            details={"field": "allow_write"},
        )
    if kind == "timeout":
        return _timeout(timeout)
    if kind == "unreachable":
        return NodeError(
            f"cannot reach the database {where}: {reason(exc)}. Check that it is up and "
            "that the credential's host, port, user and password are right.",
            code="database_unreachable",
            retryable=True,
            details={"field": "connection"},
        )
    return NodeError(
        f"the database refused the statement: {reason(exc)}",
        code="database_error",
        retryable=False,
        details={"field": "query"},
    )


def _timeout(timeout: float) -> NodeError:
    return NodeError(
        f"the statement ran longer than {timeout:g} s and was cancelled; raise `timeout`, or "
        "make the query cheaper (an index, a narrower WHERE).",
        code="database_timeout",
        retryable=False,
        details={"field": "timeout"},
    )


def _invalid(field: str, message: str) -> NodeError:
    return NodeError(message, code="invalid_parameter", retryable=False, details={"field": field})


executor = DatabaseQueryExecutor()
