"""Knowledge: load documents, chunk, embed, store and search them (RAG), offline by default.

    from nodeloom.knowledge import ingest, open_embedder, open_store, search

    store = await open_store()                       # SQLite in the data dir, or Postgres
    embedder = open_embedder("local:all-minilm-l6-v2", cache_dir=data_dir() / "knowledge")
    await ingest(store, "docs", ["docs/"], embedder)
    result = await search(store, "docs", "How do I resume a run?", embedder, top_k=5)

See docs/knowledge.md.


Names are imported on first use, so node definitions that import
`nodeloom.knowledge.parameters` at start-up do not load the whole package.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, str]] = {
    "Chunk": ("nodeloom.knowledge.chunking", "Chunk"),
    "CollectionInfo": ("nodeloom.knowledge.store", "CollectionInfo"),
    "CollectionNotFoundError": ("nodeloom.knowledge.errors", "CollectionNotFoundError"),
    "DEFAULT_MODEL": ("nodeloom.knowledge.embedding", "DEFAULT_MODEL"),
    "Document": ("nodeloom.knowledge.formats", "Document"),
    "DocumentLoadError": ("nodeloom.knowledge.errors", "DocumentLoadError"),
    "Embedder": ("nodeloom.knowledge.embedding", "Embedder"),
    "EmbeddingCache": ("nodeloom.knowledge.embedding", "EmbeddingCache"),
    "EmbeddingError": ("nodeloom.knowledge.errors", "EmbeddingError"),
    "Hit": ("nodeloom.knowledge.store", "Hit"),
    "KnowledgeError": ("nodeloom.knowledge.errors", "KnowledgeError"),
    "KnowledgeStore": ("nodeloom.knowledge.store", "KnowledgeStore"),
    "KnowledgeStoreError": ("nodeloom.knowledge.errors", "KnowledgeStoreError"),
    "LoadReport": ("nodeloom.knowledge.loaders", "LoadReport"),
    "ModelMismatchError": ("nodeloom.knowledge.errors", "ModelMismatchError"),
    "SEARCH_MODES": ("nodeloom.knowledge.retrieval", "MODES"),
    "STRATEGIES": ("nodeloom.knowledge.chunking", "STRATEGIES"),
    "StoredChunk": ("nodeloom.knowledge.store", "StoredChunk"),
    "WRITE_MODES": ("nodeloom.knowledge.writer", "MODES"),
    "chunk_documents": ("nodeloom.knowledge.chunking", "chunk_documents"),
    "context": ("nodeloom.knowledge.retrieval", "context"),
    "ensure_collection": ("nodeloom.knowledge.store", "ensure_collection"),
    "ingest": ("nodeloom.knowledge.ingestion", "ingest"),
    "load": ("nodeloom.knowledge.loaders", "load"),
    "open_embedder": ("nodeloom.knowledge.embedding", "open_embedder"),
    "open_store": ("nodeloom.knowledge.store", "open_store"),
    "parse": ("nodeloom.knowledge.formats", "parse"),
    "parse_model": ("nodeloom.knowledge.embedding", "parse_model"),
    "search": ("nodeloom.knowledge.retrieval", "search"),
    "store_url": ("nodeloom.knowledge.store", "store_url"),
    "write_chunks": ("nodeloom.knowledge.writer", "write_chunks"),
}


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'nodeloom.knowledge' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MODEL",
    "SEARCH_MODES",
    "STRATEGIES",
    "WRITE_MODES",
    "Chunk",
    "CollectionInfo",
    "CollectionNotFoundError",
    "Document",
    "DocumentLoadError",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "Hit",
    "KnowledgeError",
    "KnowledgeStore",
    "KnowledgeStoreError",
    "LoadReport",
    "ModelMismatchError",
    "StoredChunk",
    "chunk_documents",
    "context",
    "ensure_collection",
    "ingest",
    "load",
    "open_embedder",
    "open_store",
    "parse",
    "parse_model",
    "search",
    "store_url",
    "write_chunks",
]
