"""Search a collection by vector, keyword, or both fused (reciprocal rank fusion).

    result = await search(store, "docs", "how do I reset my password?", embedder,
                          top_k=5, mode="hybrid", where={"source": "faq.md"})
    result == {"hits": [{"text", "score", "metadata", "id"}, ...],
               "context": "[1] ... (source: faq.md)\n\n[2] ..."}

Hybrid ranks each list separately, then scores a hit by sum(1 / (RRF_K + rank)) over the
lists it appears in (rank from 1); it draws `CANDIDATES x top_k` from each list. Equal
scores are ordered by id, so a given store state always gives the same list.
"""

from __future__ import annotations

from typing import Any

from nodeloom.knowledge.embedding import Embedder
from nodeloom.knowledge.errors import CollectionNotFoundError, ModelMismatchError
from nodeloom.knowledge.store import Hit, KnowledgeStore

MODES = ("hybrid", "vector", "keyword")
RRF_K = 60
CANDIDATES = 4


def fuse(lists: list[list[Hit]], top_k: int) -> list[Hit]:
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(hit.id, hit)
    ordered = sorted(scores, key=lambda i: (-scores[i], i))[:top_k]
    return [Hit(i, first[i].text, round(scores[i], 6), first[i].metadata) for i in ordered]


async def search(
    store: KnowledgeStore,
    collection: str,
    query: str,
    embedder: Embedder | None,
    *,
    top_k: int = 5,
    mode: str = "hybrid",
    where: dict[str, Any] | None = None,
) -> dict[str, Any]:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    check_filter(where)
    info = await store.get_collection(collection)
    if info is None:
        known = ", ".join(c.name for c in await store.list_collections()) or "none yet"
        raise CollectionNotFoundError(
            f"no knowledge collection {collection!r} (collections: {known}); ingest "
            "documents into it first"
        )
    if embedder is not None and mode != "keyword" and embedder.reference != info.model:
        raise ModelMismatchError(
            f"collection {collection!r} was built with {info.model}; it cannot be searched "
            f"with vectors from {embedder.reference}. Use model {info.model!r}"
        )
    depth = top_k * CANDIDATES if mode == "hybrid" else top_k
    lists: list[list[Hit]] = []
    if mode in ("vector", "hybrid"):
        if embedder is None:
            raise ValueError("vector and hybrid search need an embedder")
        (vector,) = await embedder.embed([query])
        lists.append(await store.vector_search(collection, vector, depth, where))
    if mode in ("keyword", "hybrid"):
        lists.append(await store.keyword_search(collection, query, depth, where))
    hits = fuse(lists, top_k) if mode == "hybrid" else lists[0][:top_k]
    return {"hits": [hit.to_json() for hit in hits], "context": context(hits)}


def check_filter(where: Any) -> None:
    """A filter is {field: scalar}; fields are names (letters, digits, _ . -)."""
    import re

    if where is None:
        return
    if not isinstance(where, dict):
        raise ValueError(
            f"a filter is an object of metadata fields; received {type(where).__name__}"
        )
    for key, value in where.items():
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key):
            raise ValueError(f"filter field {key!r}: use letters, digits, '_', '.', '-'")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ValueError(
                f"filter field {key!r}: the value must be a string, number, boolean or null; "
                f"received {type(value).__name__}"
            )


def context(hits: list[Hit]) -> str:
    """The hits as a prompt's context: `[n] text (source: ...)` blocks, n from 1."""
    blocks = []
    for number, hit in enumerate(hits, start=1):
        where = str(hit.metadata.get("source", hit.id))
        if hit.metadata.get("page") is not None:
            where += f", page {hit.metadata['page']}"
        blocks.append(f"[{number}] {hit.text}\n(source: {where})")
    return "\n\n".join(blocks)


TOOL_HEADER = "knowledge hits: "


def tool_result(result: dict[str, Any]) -> str:
    """A search result as an agent's tool sees it: a first line listing the hits (read back
    by `hits_in_tool_result`, so answer events can say which hits were used), then the
    numbered context and how to cite it."""
    import json

    listed = [
        {"n": n, "id": hit["id"], "source": hit["metadata"].get("source"), "score": hit["score"]}
        for n, hit in enumerate(result["hits"], start=1)
    ]
    if not listed:
        return TOOL_HEADER + "[]\nNothing in the collection matches this query."
    return (
        TOOL_HEADER
        + json.dumps(listed, separators=(",", ":"))
        + "\n"
        + result["context"]
        + "\n\nCite the passages you use as [n]."
    )


def hits_in_tool_result(text: Any) -> list[dict[str, Any]] | None:
    """The hits a knowledge tool returned (see `tool_result`); None for other tools."""
    import json

    if not isinstance(text, str) or not text.startswith(TOOL_HEADER):
        return None
    first = text.split("\n", 1)[0][len(TOOL_HEADER) :]
    try:
        hits = json.loads(first)
    except ValueError:
        return None
    return hits if isinstance(hits, list) else None
