"""Write chunks into a collection: embed only what changed, count what happened.

    counts = await write_chunks(store, "docs", chunks, embedder, mode="upsert")
    # {"added": 3, "updated": 1, "unchanged": 20, "removed": 0}

Modes:
    upsert          a chunk id already stored with the same content hash is unchanged;
                    with another hash it is updated; a new id is added
    replace_source  as upsert, then every other chunk of the sources written is removed
                    (re-ingesting an edited file leaves nothing stale behind)
    append          add chunks whose content is not in the collection yet; never updates
Chunks with the same id in one batch are written once. Unchanged chunks are not embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nodeloom.knowledge.chunking import Chunk
from nodeloom.knowledge.embedding import Embedder, Progress
from nodeloom.knowledge.store import (
    KnowledgeStore,
    StoredChunk,
    ensure_collection,
    model_mismatch,
)

MODES = ("upsert", "replace_source", "append")
BATCH = 256


async def write_chunks(
    store: KnowledgeStore,
    collection: str,
    chunks: Sequence[Chunk],
    embedder: Embedder,
    *,
    mode: str = "upsert",
    progress: Progress | None = None,
) -> dict[str, int]:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    unique: dict[str, Chunk] = {}
    for chunk in chunks:
        unique.setdefault(chunk.id, chunk)
    batch = list(unique.values())
    info = await store.get_collection(collection)
    if info is not None and info.model != embedder.reference:
        raise model_mismatch(info, embedder.reference, embedder.dimension)
    dimension = embedder.dimension or (info.dimension if info is not None else None)
    if dimension is None:  # a new collection, a remote model: one call tells its dimension
        dimension = len((await embedder.embed(["dimension probe"]))[0])
    await ensure_collection(store, collection, embedder.reference, dimension)
    counts = {"added": 0, "updated": 0, "unchanged": 0, "removed": 0}
    stored = await store.existing(collection, [c.id for c in batch])
    if mode == "append":
        present = await store.known_hashes(collection, sorted({c.content_hash for c in batch}))
        todo, seen = [], set(present)
        for chunk in batch:
            if chunk.id in stored or chunk.content_hash in seen:
                counts["unchanged"] += 1
            else:
                seen.add(chunk.content_hash)
                todo.append(chunk)
                counts["added"] += 1
    else:
        todo = []
        for chunk in batch:
            previous = stored.get(chunk.id)
            if previous == chunk.content_hash:
                counts["unchanged"] += 1
                continue
            counts["updated" if previous is not None else "added"] += 1
            todo.append(chunk)
    for start in range(0, len(todo), BATCH):
        part = todo[start : start + BATCH]

        async def report(done: int, total: int, offset: int = start) -> None:
            if progress is not None:
                outcome = progress(offset + done, len(todo))
                if outcome is not None:
                    await outcome

        vectors = await embedder.embed([c.text for c in part], progress=report)
        await store.upsert(
            collection,
            [
                StoredChunk(c.id, c.text, c.metadata, c.content_hash, vector)
                for c, vector in zip(part, vectors, strict=True)
            ],
        )
    if mode == "replace_source":
        sources = sorted({str(c.metadata.get("source", "")) for c in batch})
        stale = await store.ids_of_sources(collection, sources) - set(unique)
        if stale:
            await store.delete(collection, sorted(stale))
        counts["removed"] = len(stale)
    return counts


def summary(counts: dict[str, Any]) -> str:
    return ", ".join(f"{counts[key]} {key}" for key in ("added", "updated", "unchanged", "removed"))
