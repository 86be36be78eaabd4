"""Fixtures for the store tests. `store_url`, `store` (each test on SQLite and on a real
throwaway Postgres) and `postgres_server` come from nodeloom.testing.stores.pytest_plugin,
registered in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from nodeloom.store import Store


@pytest.fixture
def count_rows(store: Store) -> Callable[[str], Awaitable[int]]:
    """`await count_rows(table)`: the rows of a table of the store's database, counted
    through an engine of its own."""

    async def count(table: str) -> int:
        engine = create_async_engine(store.url)
        try:
            async with engine.connect() as conn:
                return (await conn.execute(text(f"SELECT COUNT(*) FROM {table}"))).scalar_one()
        finally:
            await engine.dispose()

    return count
