"""One call from files to a searchable collection: load, chunk, embed, write.

    stats = await ingest(store, "docs", ["docs/"], embedder, chunk_size=256,
                         on_progress=print)

`on_progress(stage, done, total)` is called with stage `load` (files), `chunk` and
`embed` (chunks). Files that fail are listed in `stats["errors"]`; the others are
written (mode `replace_source` by default, so re-ingesting an edited file leaves no
stale chunk).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from nodeloom.knowledge.chunking import chunk_documents
from nodeloom.knowledge.embedding import Embedder
from nodeloom.knowledge.loaders import load
from nodeloom.knowledge.store import KnowledgeStore
from nodeloom.knowledge.writer import write_chunks

OnProgress = Callable[[str, int, int], Awaitable[None] | None]


async def ingest(
    store: KnowledgeStore,
    collection: str,
    sources: Sequence[Any],
    embedder: Embedder,
    *,
    strategy: str = "recursive",
    chunk_size: int = 256,
    chunk_overlap: int = 32,
    unit: str = "tokens",
    mode: str = "replace_source",
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    started = time.perf_counter()

    async def report(stage: str, done: int, total: int) -> None:
        if on_progress is not None:
            outcome = on_progress(stage, done, total)
            if outcome is not None:
                await outcome

    async def files(done: int, total: int) -> None:
        await report("load", done, total)

    loaded = await load(sources, progress=files)
    count = embedder.count_tokens if unit == "tokens" else len
    chunks = chunk_documents(
        loaded.documents,
        strategy=strategy,
        size=chunk_size,
        overlap=chunk_overlap,
        count=count,
        unit=unit,
    )
    await report("chunk", len(chunks), len(chunks))
    calls_before = embedder.model_calls

    async def embedded(done: int, total: int) -> None:
        await report("embed", done, total)

    counts = await write_chunks(store, collection, chunks, embedder, mode=mode, progress=embedded)
    seconds = time.perf_counter() - started
    return {
        "collection": collection,
        "files": loaded.files,
        "documents": len(loaded.documents),
        "chunks": len(chunks),
        "embedded": embedder.model_calls - calls_before,
        **counts,
        "errors": loaded.errors,
        "seconds": round(seconds, 3),
    }
