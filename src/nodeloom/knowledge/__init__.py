"""Knowledge: load documents, chunk, embed, store and search them (RAG), offline by default.

    from nodeloom.knowledge import ingest, open_embedder, open_store, search

    store = await open_store()                       # SQLite in the data dir, or Postgres
    embedder = open_embedder("local:all-minilm-l6-v2", cache_dir=data_dir() / "knowledge")
    await ingest(store, "docs", ["docs/"], embedder)
    result = await search(store, "docs", "How do I resume a run?", embedder, top_k=5)

See docs/knowledge.md.
"""

from nodeloom.knowledge.chunking import STRATEGIES, Chunk, chunk_documents
from nodeloom.knowledge.embedding import (
    DEFAULT_MODEL,
    Embedder,
    EmbeddingCache,
    open_embedder,
    parse_model,
)
from nodeloom.knowledge.errors import (
    CollectionNotFoundError,
    DocumentLoadError,
    EmbeddingError,
    KnowledgeError,
    KnowledgeStoreError,
    ModelMismatchError,
)
from nodeloom.knowledge.formats import Document, parse
from nodeloom.knowledge.ingest import ingest
from nodeloom.knowledge.loaders import LoadReport, load
from nodeloom.knowledge.search import MODES as SEARCH_MODES
from nodeloom.knowledge.search import context, search
from nodeloom.knowledge.store import (
    CollectionInfo,
    Hit,
    KnowledgeStore,
    StoredChunk,
    ensure_collection,
    open_store,
    store_url,
)
from nodeloom.knowledge.writer import MODES as WRITE_MODES
from nodeloom.knowledge.writer import write_chunks

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
