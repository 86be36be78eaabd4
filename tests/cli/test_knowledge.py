"""`nodeloom knowledge` as a user types it: ingest with a progress report, search (its
--json is the knowledge-search node's output), list, drop; exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodeloom.testing.documents import write_documents


@pytest.mark.slow
def test_ingest_search_list_and_drop_a_collection(nodeloom, tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs")
    ingested = nodeloom(
        "knowledge", "ingest", "facts", str(tmp_path / "docs"), str(tmp_path / "gone.md"),
        "--chunk-size", "64", "--json",
    )  # fmt: skip
    assert ingested.returncode == 0, ingested.stderr
    stats = json.loads(ingested.stdout)
    assert (stats["files"], stats["added"], stats["removed"]) == (7, stats["chunks"], 0)
    assert "embeddings" in ingested.stderr and "skipped cannot load" in ingested.stderr
    assert [Path(e["source"]).name for e in stats["errors"]] == ["gone.md"]

    again = nodeloom("knowledge", "ingest", "facts", str(tmp_path / "docs"), "--chunk-size", "64")
    assert again.returncode == 0
    assert f"0 added, 0 updated, {stats['chunks']} unchanged" in again.stderr
    assert "0 embedded" in again.stderr

    found = nodeloom("knowledge", "search", "facts", "Who paid for the solar panels?", "--json")
    assert found.returncode == 0, found.stderr
    output = json.loads(found.stdout)
    assert set(output) == {"hits", "context"}
    assert output["hits"][0]["metadata"]["source"] == str(paths["csv"])
    assert set(output["hits"][0]) == {"text", "score", "metadata", "id"}

    keyword = nodeloom(
        "knowledge", "search", "facts", "riesling", "--mode", "keyword", "--top-k", "1"
    )
    assert keyword.returncode == 0
    assert "[1]" in keyword.stdout and "sample.pdf p.1" in keyword.stdout

    listed = nodeloom("knowledge", "list", "--json")
    (collection,) = json.loads(listed.stdout)["collections"]
    assert collection["name"] == "facts" and collection["sources"] == 7

    assert nodeloom("knowledge", "drop", "facts").returncode == 0
    missing = nodeloom("knowledge", "search", "facts", "x")
    assert missing.returncode == 1
    assert "knowledge_collection_not_found" in missing.stderr


def test_ingest_exits_1_when_no_file_could_be_read(nodeloom, tmp_path: Path) -> None:
    done = nodeloom("knowledge", "ingest", "c", str(tmp_path / "nothing.txt"))
    assert done.returncode == 1
    assert "no such file" in done.stderr


def test_a_bad_filter_is_a_usage_error(nodeloom) -> None:
    done = nodeloom("knowledge", "search", "c", "q", "--filter", "[1]")
    assert done.returncode == 2
    assert "--filter" in done.stderr
