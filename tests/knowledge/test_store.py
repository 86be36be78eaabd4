"""Both knowledge stores, for real: SQLite (sqlite-vec + FTS5) and Postgres (pgvector
HNSW + tsvector). Real files of every listed type, the real local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodeloom.knowledge import (
    Embedder,
    ModelMismatchError,
    chunk_documents,
    ingest,
    load,
    open_embedder,
    search,
    write_chunks,
)
from nodeloom.knowledge.embedding import ModelRef
from nodeloom.knowledge.store import KnowledgeStore
from nodeloom.testing.documents import FACTS, write_documents

QUESTIONS = {
    "txt": "Who feeds the goats on the island?",
    "md": "How often should the espresso machine be descaled?",
    "html": "When does the dinosaur hall open again?",
    "pdf": "Why does the riesling taste of flint?",
    "docx": "When does the chess club meet?",
    "csv": "Who paid for the solar panels?",
    "json": "Which satellite photographs glaciers?",
}


async def test_a_question_about_a_fact_finds_that_documents_chunk_first(
    kstore: KnowledgeStore, embedder: Embedder, tmp_path: Path
) -> None:
    paths = write_documents(tmp_path / "docs")
    stats = await ingest(
        kstore, "facts", [str(tmp_path / "docs")], embedder, chunk_size=48, chunk_overlap=8
    )
    assert stats["files"] == 7 and stats["errors"] == []
    assert stats["added"] == stats["chunks"] > 7
    for mode in ("vector", "keyword", "hybrid"):
        for kind, question in QUESTIONS.items():
            result = await search(kstore, "facts", question, embedder, top_k=3, mode=mode)
            top = result["hits"][0]
            assert top["metadata"]["source"] == str(paths[kind]), (mode, kind, result["hits"])
            assert result["context"].startswith("[1] ")
    (info,) = await kstore.list_collections()
    assert (info.name, info.model, info.dimension, info.sources) == (
        "facts",
        "local:all-minilm-l6-v2",
        384,
        7,
    )


async def test_re_ingesting_unchanged_files_embeds_nothing_and_an_edit_replaces_the_source(
    kstore: KnowledgeStore, embedder: Embedder, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nApples grow on trees in the orchard.\n\nPears too.")
    (folder / "b.txt").write_text("Bananas ripen in the warm storeroom.")
    first = await ingest(kstore, "fruit", [str(folder)], embedder, chunk_size=8, chunk_overlap=0)
    again = await ingest(kstore, "fruit", [str(folder)], embedder, chunk_size=8, chunk_overlap=0)
    assert again["unchanged"] == first["added"] and again["added"] == again["embedded"] == 0
    (folder / "a.md").write_text("# A\n\nApples grow on trees.")
    edited = await ingest(
        kstore, "fruit", [str(folder / "a.md")], embedder, chunk_size=8, chunk_overlap=0
    )
    assert edited["removed"] >= 1
    result = await search(kstore, "fruit", "pears", embedder, mode="keyword")
    assert all("Pears" not in hit["text"] for hit in result["hits"])


async def test_upsert_append_and_replace_source_count_what_they_did(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    from nodeloom.knowledge import Document

    doc = Document("d1", "Red. Green. Blue.", {"source": "colours.txt"})
    chunks = chunk_documents(
        [doc], strategy="sentence", size=3, overlap=0, count=embedder.count_tokens
    )
    assert len(chunks) == 3
    assert await write_chunks(kstore, "c", chunks, embedder) == {
        "added": 3,
        "updated": 0,
        "unchanged": 0,
        "removed": 0,
    }
    assert await write_chunks(kstore, "c", chunks, embedder, mode="append") == {
        "added": 0,
        "updated": 0,
        "unchanged": 3,
        "removed": 0,
    }
    fewer = chunks[:1]
    assert await write_chunks(kstore, "c", fewer, embedder, mode="replace_source") == {
        "added": 0,
        "updated": 0,
        "unchanged": 1,
        "removed": 2,
    }
    info = await kstore.get_collection("c")
    assert info is not None and info.chunks == 1


async def test_writing_with_another_model_is_an_error_naming_both(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    from nodeloom.knowledge import Document

    chunks = chunk_documents([Document("d", "Some text.", {"source": "s"})])
    await write_chunks(kstore, "models", chunks, embedder)
    other = Embedder(ModelRef("openai-compatible", "tiny", "http://127.0.0.1:9/v1"))
    other.dimension = 8
    with pytest.raises(
        ModelMismatchError, match=r"local:all-minilm-l6-v2 .*openai-compatible:tiny"
    ):
        await write_chunks(kstore, "models", chunks, other)


async def test_search_is_deterministic_ties_broken_by_id_and_filters_apply(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    from nodeloom.knowledge import Document

    docs = [
        Document(f"d{i}", "Identical sentence about owls.", {"source": f"s{i}.txt"})
        for i in range(4)
    ]
    await write_chunks(kstore, "ties", chunk_documents(docs), embedder)
    for mode in ("vector", "keyword", "hybrid"):
        results = [
            await search(kstore, "ties", "owls", embedder, top_k=4, mode=mode) for _ in range(2)
        ]
        ids = [h["id"] for h in results[0]["hits"]]
        assert ids == sorted(ids) and len(ids) == 4
        assert results[0] == results[1]
        filtered = await search(
            kstore, "ties", "owls", embedder, mode=mode, where={"source": "s2.txt"}
        )
        assert [h["metadata"]["source"] for h in filtered["hits"]] == ["s2.txt"]


async def test_drop_removes_a_collection(kstore: KnowledgeStore, embedder: Embedder) -> None:
    from nodeloom.knowledge import Document, KnowledgeError

    await write_chunks(
        kstore, "gone", chunk_documents([Document("d", "x y z", {"source": "s"})]), embedder
    )
    assert await kstore.drop_collection("gone") is True
    assert await kstore.drop_collection("gone") is False
    with pytest.raises(KnowledgeError, match="no knowledge collection 'gone'"):
        await search(kstore, "gone", "x", embedder)


async def test_documents_of_every_type_load_into_the_store(
    kstore: KnowledgeStore, tmp_path: Path
) -> None:
    write_documents(tmp_path)
    report = await load([str(tmp_path)])
    embedder = open_embedder()
    counts = await write_chunks(
        kstore, "all", chunk_documents(report.documents, size=400), embedder
    )
    assert counts["added"] == len(report.documents) == len(FACTS) + 1


async def test_a_keyword_query_of_punctuation_stopwords_and_odd_words_does_not_fail(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    from nodeloom.knowledge import Document

    text = "Café naïve_test 42 items: the O'Reilly book & (draft)."
    await write_chunks(
        kstore, "odd", chunk_documents([Document("d", text, {"source": "s"})]), embedder
    )
    for query in ("_", "the of and", "'); DROP TABLE kchunks; --", "café 42", "o'reilly | & !"):
        result = await search(kstore, "odd", query, embedder, mode="keyword")
        assert isinstance(result["hits"], list)
    assert (await search(kstore, "odd", "café 42", embedder, mode="keyword"))["hits"]


async def test_a_filter_must_be_fields_with_scalar_values(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    from nodeloom.knowledge import Document

    await write_chunks(
        kstore, "f", chunk_documents([Document("d", "x", {"source": "s"})]), embedder
    )
    for where in ({'a"] or 1=1 --': 1}, {"source": ["s"]}, ["source"]):
        with pytest.raises(ValueError, match="filter"):
            await search(kstore, "f", "x", embedder, where=where)  # type: ignore[arg-type]


async def test_two_writers_creating_one_collection_at_once_both_succeed(
    kstore: KnowledgeStore, embedder: Embedder
) -> None:
    import asyncio

    from nodeloom.knowledge import Document

    first = chunk_documents([Document("a", "Alpha text.", {"source": "a"})])
    second = chunk_documents([Document("b", "Beta text.", {"source": "b"})])
    await asyncio.gather(
        write_chunks(kstore, "race", first, embedder),
        write_chunks(kstore, "race", second, embedder),
    )
    info = await kstore.get_collection("race")
    assert info is not None and info.chunks == 2
