"""Chunks are measured in tokens (or characters), overlap, keep their source, position
and heading path, and have ids that depend only on source, settings, position and text."""

from __future__ import annotations

import itertools

import pytest

from nodeloom.knowledge import Document, chunk_documents
from nodeloom.knowledge.local_model import tokenizer


def tokens(text: str) -> int:
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


MANUAL = Document(
    "doc_manual",
    "# Manual\n\nIntro paragraph about the device.\n\n## Setup\n\n### Power\n\n"
    + " ".join(f"Step {i} connects cable number {i} to socket {i}." for i in range(40))
    + "\n\n## Care\n\nWipe the screen with a dry cloth. Never use solvents on it.\n",
    {"source": "manual.md", "mime": "text/markdown"},
)


@pytest.mark.parametrize("strategy", ["recursive", "markdown", "sentence"])
def test_no_chunk_exceeds_the_size_in_tokens(strategy: str) -> None:
    chunks = chunk_documents([MANUAL], strategy=strategy, size=40, overlap=8, count=tokens)
    assert len(chunks) > 5
    assert all(tokens(c.text) <= 40 for c in chunks)
    assert [c.metadata["position"] for c in chunks] == list(range(len(chunks)))
    assert all(c.metadata["source"] == "manual.md" for c in chunks)
    assert all(
        MANUAL.text[c.metadata["start"] : c.metadata["end"]].strip() == c.text for c in chunks
    )


def test_consecutive_chunks_overlap() -> None:
    chunks = chunk_documents([MANUAL], size=40, overlap=12, count=tokens)
    shared = [a for a, b in itertools.pairwise(chunks) if b.metadata["start"] < a.metadata["end"]]
    assert shared, "with an overlap, some chunk starts before the previous one ends"


def test_markdown_chunks_never_span_two_sections_and_carry_the_heading_path() -> None:
    chunks = chunk_documents([MANUAL], strategy="markdown", size=60, overlap=0, count=tokens)
    care = [c for c in chunks if "dry cloth" in c.text]
    assert care and care[0].metadata["headings"] == ["Manual", "Care"]
    power = [c for c in chunks if "Step 3 " in c.text]
    assert power[0].metadata["headings"] == ["Manual", "Setup", "Power"]
    assert not any("Step 39" in c.text and "dry cloth" in c.text for c in chunks)


def test_sentence_chunks_end_at_sentence_boundaries() -> None:
    chunks = chunk_documents([MANUAL], strategy="sentence", size=30, overlap=0, count=tokens)
    body = [c for c in chunks if "Step" in c.text]
    assert all(c.text.endswith(".") for c in body)


def test_the_same_text_chunked_the_same_way_gives_the_same_ids() -> None:
    first = chunk_documents([MANUAL], size=40, overlap=8, count=tokens)
    again = chunk_documents(
        [Document("other-id", MANUAL.text, dict(MANUAL.metadata))], size=40, overlap=8, count=tokens
    )
    assert [c.id for c in first] == [c.id for c in again]
    other = chunk_documents([MANUAL], size=41, overlap=8, count=tokens)
    assert {c.id for c in first}.isdisjoint(c.id for c in other)


def test_characters_are_an_option() -> None:
    chunks = chunk_documents([MANUAL], size=100, overlap=10, unit="characters")
    assert all(len(c.text) <= 100 for c in chunks)


def test_a_word_longer_than_the_size_is_cut() -> None:
    document = Document("d", "x" * 500, {"source": "long.txt"})
    chunks = chunk_documents([document], size=64, overlap=0, count=tokens)
    assert all(tokens(c.text) <= 64 for c in chunks)
    assert "".join(c.text for c in chunks) == "x" * 500


def test_bad_sizes_are_refused_with_both_values() -> None:
    with pytest.raises(ValueError, match="chunk_size=10, chunk_overlap=10"):
        chunk_documents([MANUAL], size=10, overlap=10)
