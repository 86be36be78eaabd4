"""pytest fixtures for code that uses the run store, on SQLite and on a real Postgres.

pytest_plugins = ["nodeloom.testing.stores.pytest_plugin"]

postgres_server   session: a throwaway Postgres cluster; its base URL. Without
                  initdb/pg_ctl the tests that use it fail (they do not skip)
store_url         parametrised sqlite | postgres: the URL of an empty database
store             an open Store on `store_url` (blobs in the test's tmp dir)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from nodeloom.store import Store
from nodeloom.testing.stores.postgres import (
    PostgresUnavailable,
    create_database,
    drop_database,
    throwaway_postgres,
)

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    try:
        with throwaway_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(params=BACKENDS)
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'nodeloom.db'}"
        return
    url = await create_database(request.getfixturevalue("postgres_server"))
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.fixture
async def store(store_url: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(store_url, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()
