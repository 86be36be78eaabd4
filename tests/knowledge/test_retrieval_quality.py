"""Retrieval quality on the shipped corpus (examples/knowledge/docs) and its 61 labelled
questions (examples/knowledge/questions.json): recall@5 and MRR for vector, keyword and
hybrid search, on both stores. A hit counts only if it is the labelled passage (source and
evidence text), not merely the right file. Hybrid must be at least as good as the better
of the other two on both measures: exactly on SQLite (sqlite-vec's KNN is exact), and on
Postgres within one question's swap of rank 1 and 2 (pgvector's HNSW index is approximate
and draws each chunk's graph level at random, so its vector ranking may differ by a near
tie from one build to the next: seen once in CI, MRR 0.959 hybrid against 0.9645 vector)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodeloom.knowledge import Embedder, ingest
from nodeloom.knowledge.evaluation import evaluate
from nodeloom.knowledge.store import KnowledgeStore

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "knowledge" / "docs"
QUESTIONS = json.loads((ROOT / "examples" / "knowledge" / "questions.json").read_text())


@pytest.mark.slow
async def test_hybrid_search_is_at_least_as_good_as_vector_or_keyword_alone(
    kstore: KnowledgeStore, embedder: Embedder, knowledge_url: str
) -> None:
    questions = QUESTIONS["questions"]
    assert len(questions) >= 50
    stats = await ingest(kstore, "orbit", [str(CORPUS)], embedder, chunk_size=64, chunk_overlap=8)
    assert stats["errors"] == [] and stats["files"] == 12
    report = await evaluate(kstore, "orbit", questions, embedder, k=5)
    print(f"\nretrieval quality ({knowledge_url.split(':')[0]}): {json.dumps(report)}")
    hybrid, vector, keyword = report["hybrid"], report["vector"], report["keyword"]
    slack = 0.0 if knowledge_url.startswith("sqlite") else 0.5 / len(questions)
    for measure in ("recall@5", "mrr"):
        best_alone = max(vector[measure], keyword[measure])
        assert hybrid[measure] >= best_alone - slack, (measure, report)
    assert hybrid["recall@5"] >= 0.95 and hybrid["mrr"] >= 0.9, report
