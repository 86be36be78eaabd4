"""What the knowledge nodes share: the store and the embedder of a run, and how node
parameters become library calls. Node folders import this, never the stores directly.

The store is `NODELOOM_KNOWLEDGE_URL` (else the run store's kind; SQLite in the run's data
directory); embeddings are cached in `<data dir>/knowledge/embeddings.sqlite`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.knowledge.chunking import Chunk
from nodeloom.knowledge.embedding import Embedder, content_hash, open_embedder
from nodeloom.knowledge.errors import EmbeddingError
from nodeloom.knowledge.store import KnowledgeStore, default_data_dir, open_store


def data_dir_of(context: Any) -> Path:
    """The data directory of a FlowContext, a BuildContext or a Services."""
    services = context if hasattr(context, "data_dir") else getattr(context, "services", None)
    if services is not None and getattr(services, "data_dir", None) is not None:
        return Path(services.data_dir)
    return default_data_dir()


async def store_for(context: Any) -> KnowledgeStore:
    return await open_store(data_dir=data_dir_of(context))


def embedder_for(data: Mapping[str, Any], context: Any) -> Embedder:
    """The embedder a node's `model` (and `base_url`, `batch_size`) name, with the cache."""
    options: dict[str, Any] = {}
    if data.get("batch_size"):
        options["batch_size"] = int(data["batch_size"])
    return open_embedder(
        data.get("model") or None,
        base_url=data.get("base_url") or None,
        cache_dir=data_dir_of(context) / "knowledge",
        **options,
    )


async def search_embedder(
    data: Mapping[str, Any], context: Any, store: KnowledgeStore, collection: str
) -> Embedder | None:
    """The embedder for a query: the node's `model`, else the collection's model (None
    when the collection does not exist: the search then says so)."""
    if data.get("model"):
        return embedder_for(data, context)
    info = await store.get_collection(collection)
    if info is None:
        return None
    return embedder_for({**data, "model": info.model}, context)


class KnownVectors(Embedder):
    """An embedder over vectors computed upstream (an Embedder node's output): texts are
    looked up by content hash; a text without a vector is an error naming it."""

    def __init__(self, base: Embedder, vectors: dict[str, list[float]]) -> None:
        super().__init__(base.ref, cache=None)
        self.vectors = vectors
        self.dimension = len(next(iter(vectors.values()))) if vectors else base.dimension

    async def embed(self, texts: Any, progress: Any = None) -> list[list[float]]:
        found = []
        for text in texts:
            vector = self.vectors.get(content_hash(text))
            if vector is None:
                raise EmbeddingError(
                    f"no upstream embedding for the text {text[:60]!r}; wire every chunk "
                    "through the Embedder node, or wire plain chunks and set `model`"
                )
            found.append(vector)
        return found


def chunks_from(value: Any, where: str) -> tuple[list[Chunk], str | None, dict[str, list[float]]]:
    """Chunks from a port value: an Embedder node's `{"model", "chunks"}`, a list of
    chunks or documents `{"id", "text", "metadata"}`, or strings. Returns the chunks, the
    model their `embedding`s came from (None: not embedded) and hash -> vector."""
    model = None
    if isinstance(value, dict) and isinstance(value.get("chunks"), list):
        model = value.get("model")
        value = value["chunks"]
    if isinstance(value, dict | str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(
            f"{where} expects a list of chunks {{'id', 'text', 'metadata'}}; "
            f"received {type(value).__name__}"
        )
    chunks: list[Chunk] = []
    vectors: dict[str, list[float]] = {}
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = {"text": item, "metadata": {"source": "text"}}
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError(
                f"{where}: item {index} is not a chunk {{'id', 'text', 'metadata'}} "
                f"(received {type(item).__name__})"
            )
        chunk_id = (
            item.get("id")
            or "chk_"
            + content_hash(f"{(item.get('metadata') or {}).get('source', '')}\0{item['text']}")[:32]
        )
        chunk = Chunk(str(chunk_id), item["text"], dict(item.get("metadata") or {}))
        chunks.append(chunk)
        if isinstance(item.get("embedding"), list):
            vectors[chunk.content_hash] = [float(x) for x in item["embedding"]]
    return chunks, model if vectors else None, vectors


def text_of(value: Any) -> str:
    """The text of a spine value: a string, or an object's message/text/query/input."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("message", "text", "query", "input", "question"):
            if isinstance(value.get(key), str):
                return value[key]
    return ""
