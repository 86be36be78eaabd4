"""`python -m benchmarks.knowledge --quick` runs end to end and reports every figure for
both stores (no timing asserted: the figures live in docs/knowledge.md#sizing)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_knowledge_benchmark_reports_ingest_latency_and_hnsw_recall() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.knowledge", "--quick", "--json"],
        cwd=ROOT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    assert results["ingest"]["chunks"] == 64 and results["ingest"]["chunks_per_s"] > 0
    row = results["1000_chunks"]
    assert set(row) == {"sqlite", "postgres"}
    for figures in row.values():
        for mode in ("vector", "keyword", "hybrid", "numpy_floor"):
            assert figures[mode]["p99_ms"] >= figures[mode]["p50_ms"] > 0
    assert row["sqlite"]["recall@10_vs_exact"] == 1.0, "sqlite-vec searches exactly"
    assert row["postgres"]["recall@10_vs_exact"] >= 0.95
