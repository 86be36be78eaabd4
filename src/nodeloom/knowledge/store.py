"""The knowledge store: collections of embedded chunks, searched by vector and keyword.

    store = await open_store()            # NODELOOM_KNOWLEDGE_URL, else like the run store
    info = await store.ensure_collection("docs", model="local:all-minilm-l6-v2", dimension=384)

Two implementations of one interface, `KnowledgeStore`:

    sqlite:///path/knowledge.db      SQLite with sqlite-vec (exact KNN) and FTS5 (bm25)
    postgresql://user@host/db        Postgres with pgvector (HNSW, cosine) and tsvector

The default URL is `NODELOOM_KNOWLEDGE_URL`; without it, the run store's database kind:
the same Postgres database when NODELOOM_DATABASE_URL is Postgres, else
`<data dir>/knowledge.db`. A collection remembers its embedding model and dimension.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from nodeloom.knowledge.errors import KnowledgeStoreError, ModelMismatchError
from nodeloom.knowledge.records import CollectionInfo, Hit, StoredChunk, keyword_terms

ENV_VAR = "NODELOOM_KNOWLEDGE_URL"
DEFAULT_FILE = "knowledge.db"


class KnowledgeStore(Protocol):
    """What both stores implement. Search results are ordered by score, ties by id."""

    url: str

    async def list_collections(self) -> list[CollectionInfo]: ...

    async def get_collection(self, name: str) -> CollectionInfo | None: ...

    async def create_collection(self, name: str, model: str, dimension: int) -> CollectionInfo: ...

    async def drop_collection(self, name: str) -> bool: ...

    async def existing(self, collection: str, ids: list[str]) -> dict[str, str]:
        """id -> content hash, for the ids that are stored."""
        ...

    async def known_hashes(self, collection: str, hashes: list[str]) -> set[str]: ...

    async def ids_of_sources(self, collection: str, sources: list[str]) -> set[str]: ...

    async def upsert(self, collection: str, chunks: list[StoredChunk]) -> None: ...

    async def delete(self, collection: str, ids: list[str]) -> None: ...

    async def vector_search(
        self, collection: str, vector: list[float], k: int, where: dict[str, Any] | None
    ) -> list[Hit]: ...

    async def keyword_search(
        self, collection: str, query: str, k: int, where: dict[str, Any] | None
    ) -> list[Hit]: ...

    async def close(self) -> None: ...


async def ensure_collection(
    store: KnowledgeStore, name: str, model: str, dimension: int
) -> CollectionInfo:
    """The collection, created for `model` if new; ModelMismatchError naming both models
    if it exists with another model or dimension."""
    info = await store.get_collection(name)
    if info is None:
        try:
            return await store.create_collection(name, model, dimension)
        except Exception:  # another writer created it first: check it like any other
            info = await store.get_collection(name)
            if info is None:
                raise
    if info.model != model or info.dimension != dimension:
        raise model_mismatch(info, model, dimension)
    return info


def model_mismatch(info: CollectionInfo, model: str, dimension: int | None) -> ModelMismatchError:
    size = f" ({dimension} dimensions)" if dimension else ""
    return ModelMismatchError(
        f"collection {info.name!r} was built with {info.model} ({info.dimension} dimensions); "
        f"it cannot take vectors from {model}{size}. Use model {info.model!r}, or write to "
        f"another collection (or drop {info.name!r} first)"
    )


def store_url(url: str | None = None, data_dir: Path | None = None) -> str:
    """The knowledge store's URL: `url`, NODELOOM_KNOWLEDGE_URL, the run store's Postgres,
    else a SQLite file in the data directory (`data_dir`, default NODELOOM_DATA_DIR)."""
    if url:
        return url
    configured = os.environ.get(ENV_VAR)
    if configured:
        return configured
    database = os.environ.get("NODELOOM_DATABASE_URL", "")
    if database.startswith(("postgres://", "postgresql://", "postgresql+asyncpg://")):
        return database
    return f"sqlite:///{(data_dir or default_data_dir()) / DEFAULT_FILE}"


def default_data_dir() -> Path:
    """NODELOOM_DATA_DIR, else the user data dir: the rule of `nodeloom.paths.data_dir`,
    restated because knowledge sits below `paths` in the package layers."""
    import platformdirs

    configured = os.environ.get("NODELOOM_DATA_DIR")
    return Path(configured) if configured else Path(platformdirs.user_data_dir("nodeloom"))


async def open_store(url: str | None = None, data_dir: Path | None = None) -> KnowledgeStore:
    resolved = store_url(url, data_dir)
    scheme = resolved.split(":", 1)[0].lower()
    if scheme.startswith("sqlite"):
        from nodeloom.knowledge.sqlite_store import SqliteKnowledgeStore

        path = resolved.split(":///", 1)[1] if ":///" in resolved else ""
        if not path:
            raise KnowledgeStoreError(f"a SQLite knowledge URL is sqlite:///PATH; got {resolved!r}")
        return await SqliteKnowledgeStore.open(path)
    if scheme in ("postgres", "postgresql", "postgresql+asyncpg"):
        from nodeloom.knowledge.postgres_store import PostgresKnowledgeStore

        return await PostgresKnowledgeStore.open(resolved)
    raise KnowledgeStoreError(
        f"unsupported knowledge store URL scheme {scheme!r}; use sqlite:///PATH or "
        f"postgresql://USER@HOST:PORT/DATABASE (in {ENV_VAR})"
    )


__all__ = [
    "CollectionInfo",
    "Hit",
    "KnowledgeStore",
    "StoredChunk",
    "ensure_collection",
    "keyword_terms",
    "model_mismatch",
    "open_store",
    "store_url",
]
