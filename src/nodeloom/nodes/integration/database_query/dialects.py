"""What differs between SQLite, Postgres and MySQL/MariaDB: the driver a URL maps to,
how a transaction is made read-only and given a statement timeout, and which driver
errors mean "read-only", "timed out" or "unreachable".

Read-only is the database's own rule, not a guess from the SQL text:
SQLite `PRAGMA query_only`, Postgres `SET TRANSACTION READ ONLY`, MariaDB/MySQL
`SET SESSION TRANSACTION READ ONLY` + `START TRANSACTION READ ONLY` (the session's mode
too, because DDL commits implicitly and would run outside a read-only transaction).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.errors import NodeError

# scheme as written -> (dialect, async driver)
DRIVERS = {
    "sqlite": ("sqlite", "aiosqlite"),
    "sqlite+aiosqlite": ("sqlite", "aiosqlite"),
    "postgresql": ("postgresql", "asyncpg"),
    "postgres": ("postgresql", "asyncpg"),
    "postgresql+asyncpg": ("postgresql", "asyncpg"),
    "mysql": ("mysql", "aiomysql"),
    "mariadb": ("mysql", "aiomysql"),
    "mysql+aiomysql": ("mysql", "aiomysql"),
    "mariadb+aiomysql": ("mysql", "aiomysql"),
}
_SQLITE_ATTACH = 24  # sqlite3.SQLITE_ATTACH: an authorizer action code
_SQLITE_PRAGMA = 19  # sqlite3.SQLITE_PRAGMA
_SQLITE_DENY = 1
# Pragmas whose argument names what to read (PRAGMA table_info(t)); any other pragma
# given a value sets it.
_SQLITE_PRAGMAS_WITH_ARGUMENT = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_info",
        "index_xinfo",
        "index_list",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)


def database_url(value: Any) -> URL:
    """The async SQLAlchemy URL for a connection string; never shows the password."""
    if not isinstance(value, str) or not value.strip():
        raise _connection_error(
            "Database Query needs `connection`: {{ $credentials.NAME }} where the credential "
            "holds a URL such as postgresql://user:password@host:5432/db."
        )
    try:
        url = make_url(value.strip())
    except ArgumentError:
        raise _connection_error(
            "`connection` is not a database URL (the value is not shown: it may hold a "
            "password). Expected postgresql://user:password@host/db, mysql://..., or "
            "sqlite:///path.db."
        ) from None
    scheme = url.drivername.lower()
    if scheme not in DRIVERS:
        raise _connection_error(
            f"`connection` uses {scheme!r}; supported: postgresql://, mysql:// (MariaDB "
            "too) and sqlite:///."
        )
    dialect, driver = DRIVERS[scheme]
    return url.set(drivername=f"{dialect}+{driver}")


async def prepare(connection: AsyncConnection, *, read_only: bool, timeout: float) -> Any:
    """Open the transaction the statement runs in; returns what `release` needs."""
    dialect = connection.dialect.name
    if dialect == "sqlite":
        raw = (await connection.get_raw_connection()).driver_connection
        deadline = time.monotonic() + timeout
        await raw.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
        await connection.exec_driver_sql(f"PRAGMA query_only = {1 if read_only else 0}")
        await raw.set_authorizer(_authorizer(read_only))
        return raw
    if dialect == "postgresql":
        if read_only:
            await connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        await connection.execute(
            text("SELECT set_config('statement_timeout', :ms, true)"),
            {"ms": f"{round(timeout * 1000)}ms"},
        )
        return None
    # START TRANSACTION READ ONLY alone lets DDL through (DDL commits implicitly and runs
    # outside it); the session's access mode covers that statement too.
    access = "READ ONLY" if read_only else "READ WRITE"
    await connection.exec_driver_sql(f"SET SESSION TRANSACTION {access}")
    await connection.exec_driver_sql(f"SET SESSION max_statement_time = {float(timeout)!r}")
    await connection.exec_driver_sql(f"START TRANSACTION {access}")
    return None


async def release(connection: AsyncConnection, raw: Any) -> None:
    """Undo what `prepare` set on a pooled connection."""
    if raw is not None:
        with contextlib.suppress(Exception):  # a broken connection: nothing to undo
            await raw.set_progress_handler(None, 0)
            await raw.set_authorizer(None)


def _authorizer(read_only: bool) -> Any:
    """SQLite authorizer: never ATTACH (nor VACUUM INTO, which attaches), so a statement
    cannot open or write other files; read-only, no PRAGMA that sets a value either
    (`PRAGMA journal_mode = WAL` changes the file although query_only is on)."""

    def authorize(action: int, arg1: Any, arg2: Any, *_: Any) -> int:
        if action == _SQLITE_ATTACH:
            return _SQLITE_DENY
        if read_only and action == _SQLITE_PRAGMA and arg2 is not None:
            return 0 if str(arg1).lower() in _SQLITE_PRAGMAS_WITH_ARGUMENT else _SQLITE_DENY
        return 0

    return authorize


def classify(exc: BaseException) -> str:
    """`read_only`, `timeout`, `unreachable` or `error` for a driver exception."""
    orig = getattr(exc, "orig", None) or exc
    message = str(orig).lower()
    sqlstate = getattr(orig, "sqlstate", None) or getattr(
        getattr(orig, "__cause__", None), "sqlstate", None
    )
    number = orig.args[0] if orig.args and isinstance(orig.args[0], int) else None
    if sqlstate == "25006" or number == 1792 or "readonly database" in message:
        return "read_only"
    if "read-only transaction" in message or "read only transaction" in message:
        return "read_only"
    if sqlstate == "57014" or number in (1969, 3024) or message.strip() == "interrupted":
        return "timeout"
    if "statement timeout" in message or "max_statement_time" in message:
        return "timeout"
    if isinstance(orig, (OSError, ConnectionError)) or number in (2002, 2003, 2006, 2013):
        return "unreachable"
    if "connect" in message and ("refused" in message or "could not" in message):
        return "unreachable"
    return "error"


def reason(exc: BaseException) -> str:
    """The database's own message, without SQLAlchemy's echo of the SQL and parameters."""
    orig = getattr(exc, "orig", None) or exc
    text_ = str(orig).strip() or type(orig).__name__
    return text_.split("\n[SQL:", 1)[0]


def _connection_error(message: str) -> NodeError:
    return NodeError(
        message, code="invalid_parameter", retryable=False, details={"field": "connection"}
    )
