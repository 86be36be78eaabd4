"""Retrieval quality on a labelled question set: recall@k and MRR per search mode.

    questions = [{"question": "...", "source": "shipping.md", "evidence": "..."}, ...]
    report = await evaluate(store, "docs", questions, embedder, k=5)
    # {"vector": {"recall@5": 0.93, "mrr": 0.81, "questions": 61}, "keyword": ..., "hybrid": ...}

A question is answered at rank r when the r-th hit's `metadata.source` ends with the
labelled source (a file name or relative path) and, if the question has `evidence`, the
hit's text (whitespace collapsed) contains it: the right passage, not just the right
file. recall@k: the share of questions answered within k hits; MRR: the mean of 1/r over
questions (0 when not within k).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nodeloom.knowledge.embedding import Embedder
from nodeloom.knowledge.retrieval import MODES, search
from nodeloom.knowledge.store import KnowledgeStore


def rank_of(hits: list[dict[str, Any]], source: str, evidence: str | None = None) -> int | None:
    """The rank (from 1) of the first hit from `source` whose text holds `evidence`."""
    for rank, hit in enumerate(hits, start=1):
        if not str(hit["metadata"].get("source", "")).replace("\\", "/").endswith(source):
            continue
        if evidence is None or evidence in " ".join(hit["text"].split()):
            return rank
    return None


async def evaluate(
    store: KnowledgeStore,
    collection: str,
    questions: Sequence[dict[str, str]],
    embedder: Embedder,
    *,
    k: int = 5,
    modes: Sequence[str] = MODES,
) -> dict[str, dict[str, float]]:
    report: dict[str, dict[str, float]] = {}
    for mode in modes:
        found, reciprocal = 0, 0.0
        for item in questions:
            result = await search(store, collection, item["question"], embedder, top_k=k, mode=mode)
            rank = rank_of(result["hits"], item["source"], item.get("evidence"))
            if rank is not None:
                found += 1
                reciprocal += 1.0 / rank
        count = max(len(questions), 1)
        report[mode] = {
            f"recall@{k}": round(found / count, 4),
            "mrr": round(reciprocal / count, 4),
            "questions": len(questions),
        }
    return report
