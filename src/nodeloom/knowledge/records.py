"""What the knowledge stores hold and answer: collections, stored chunks, search hits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    model: str
    dimension: int
    chunks: int = 0
    sources: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "dimension": self.dimension,
            "chunks": self.chunks,
            "sources": self.sources,
        }


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: str
    text: str
    metadata: dict[str, Any]
    content_hash: str
    embedding: list[float]

    @property
    def source(self) -> str:
        return str(self.metadata.get("source", ""))


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "score": self.score, "metadata": self.metadata, "id": self.id}


def keyword_terms(query: str) -> list[str]:
    """The words of a keyword query (letters and digits), lower-cased, unique, in order."""
    seen: dict[str, None] = {}
    for word in re.findall(r"[^\W_]+", query.lower()):
        seen.setdefault(word, None)
    return list(seen)
