"""Which database the store uses: an argument, else NODELOOM_DATABASE_URL, else a SQLite
file `nodeloom.db` in the data directory.

Accepted forms (the plain ones are mapped to the async drivers the store uses):

    sqlite:///relative/or/absolute.db      -> sqlite+aiosqlite:///...
    sqlite:////abs/path.db
    sqlite+aiosqlite:///...
    postgresql://user:pass@host:5432/db    -> postgresql+asyncpg://...
    postgres://...                         -> postgresql+asyncpg://...
    postgresql+asyncpg://...
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from nodeloom.paths import data_dir
from nodeloom.store.errors import StoreUnavailableError

ENV_VAR = "NODELOOM_DATABASE_URL"
DEFAULT_FILE = "nodeloom.db"

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "sqlite+pysqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}


def database_url(url: str | URL | None = None) -> URL:
    """The async SQLAlchemy URL of the store's database.

    `url` wins, then the environment variable NODELOOM_DATABASE_URL, then the default
    `sqlite+aiosqlite:///<data dir>/nodeloom.db`.
    """
    if url is None:
        url = os.environ.get(ENV_VAR) or None
    if url is None:
        return make_url(f"sqlite+aiosqlite:///{data_dir() / DEFAULT_FILE}")
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except ArgumentError:
        raise StoreUnavailableError(
            f"cannot parse the database URL {url!r}; use sqlite:///PATH or "
            f"postgresql://USER:PASSWORD@HOST:PORT/DATABASE (in {ENV_VAR} or Store.open)"
        ) from None
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise StoreUnavailableError(
            f"unsupported database URL scheme {parsed.drivername!r} in "
            f"{safe_url(parsed)!r}; supported: {', '.join(sorted(_DRIVERS))}"
        )
    return parsed.set(drivername=driver)


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL; None for Postgres and for an in-memory database."""
    if not url.drivername.startswith("sqlite"):
        return None
    database = url.database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return Path(database)


def safe_url(url: URL) -> str:
    """The URL for messages: the password hidden."""
    return url.render_as_string(hide_password=True)


def describe(url: URL) -> str:
    """How messages name the database: the SQLite file, or the URL without password."""
    path = sqlite_file(url)
    if path is not None:
        return f"the SQLite database {str(path)!r}"
    if url.drivername.startswith("sqlite"):
        return "the in-memory SQLite database"
    return f"the database {safe_url(url)!r}"
