"""Documents -> chunks, measured in tokens (or characters).

    chunks = chunk_documents(documents, strategy="recursive", size=200, overlap=30,
                             count=embedder.count_tokens)

Strategies: `recursive` splits at the largest boundary that fits (paragraphs, lines,
sentences, words, then anywhere) and packs the pieces up to `size`; `markdown` first cuts
at headings, so no chunk spans two sections; `sentence` packs whole sentences. Each chunk
is a slice of its document's text (offsets `start`/`end`), carries the document's
metadata plus `document_id`, `position` (0, 1, ...), and `headings` (the Markdown heading
path above its first line of text). Ids are a hash of the source, the chunking
settings, the position and the text: the same text chunked the same way has the same ids
on every machine.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nodeloom.knowledge.formats import Document

STRATEGIES = ("recursive", "markdown", "sentence")
Counter = Callable[[str], int]
_SEPARATORS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    text: str
    metadata: dict[str, Any]

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "metadata": dict(self.metadata)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Chunk:
        return cls(str(value["id"]), str(value["text"]), dict(value.get("metadata") or {}))


def characters(text: str) -> int:
    return len(text)


def chunk_documents(
    documents: Iterable[Document],
    *,
    strategy: str = "recursive",
    size: int = 256,
    overlap: int = 32,
    count: Counter = characters,
    unit: str = "tokens",
) -> list[Chunk]:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if size < 1 or overlap < 0 or overlap >= size:
        raise ValueError(
            f"chunk_size must be at least 1 and chunk_overlap in [0, chunk_size); "
            f"received chunk_size={size}, chunk_overlap={overlap}"
        )
    settings = f"{strategy}:{size}:{overlap}:{unit}"
    chunks: list[Chunk] = []
    for document in documents:
        spans = _spans(document.text, strategy, size, overlap, count)
        headings = _headings(document.text)
        source = str(document.metadata.get("source", document.id))
        for position, (start, end) in enumerate(spans):
            text = document.text[start:end].strip()
            if not text:
                continue
            key = f"{source}\0{document.metadata.get('page')}\0{settings}\0{position}\0{text}"
            metadata = {
                **document.metadata,
                "document_id": document.id,
                "position": position,
                "start": start,
                "end": end,
                "headings": _path_at(headings, _first_content(document.text, start, end)),
            }
            chunks.append(
                Chunk("chk_" + hashlib.sha256(key.encode()).hexdigest()[:32], text, metadata)
            )
    return chunks


def _spans(
    text: str, strategy: str, size: int, overlap: int, count: Counter
) -> list[tuple[int, int]]:
    if strategy == "markdown":
        spans = []
        bounds = [m.start() for m in _HEADING.finditer(text)]
        edges = sorted({0, *bounds, len(text)})
        for start, end in itertools.pairwise(edges):
            spans.extend(
                _pack(
                    _atoms(text, start, end, size, count, _SEPARATORS), size, overlap, count, text
                )
            )
        return spans
    if strategy == "sentence":
        atoms = []
        for start, end in _split_at(text, 0, len(text), _SENTENCE_END):
            atoms.extend(_atoms(text, start, end, size, count, _SEPARATORS[3:]))
        return _pack(atoms, size, overlap, count, text)
    return _pack(_atoms(text, 0, len(text), size, count, _SEPARATORS), size, overlap, count, text)


def _split_at(
    text: str, start: int, end: int, pattern: re.Pattern[str] | str
) -> list[tuple[int, int]]:
    """Cut [start, end) after each separator (the separator stays with the left piece)."""
    pieces, cursor = [], start
    if isinstance(pattern, str):
        found = text.find(pattern, start, end)
        while found != -1:
            cut = found + len(pattern)
            pieces.append((cursor, cut))
            cursor = cut
            found = text.find(pattern, cut, end)
    else:
        for match in pattern.finditer(text, start, end):
            pieces.append((cursor, match.end()))
            cursor = match.end()
    if cursor < end:
        pieces.append((cursor, end))
    return [(a, b) for a, b in pieces if b > a]


def _atoms(
    text: str, start: int, end: int, size: int, count: Counter, separators: tuple[str, ...]
) -> list[tuple[int, int, int]]:
    """Pieces of [start, end) that each fit in `size`: (start, end, measure)."""
    measure = count(text[start:end])
    if measure <= size:
        return [(start, end, measure)]
    for index, separator in enumerate(separators):
        pieces = _split_at(text, start, end, separator)
        if len(pieces) > 1:
            out = []
            for a, b in pieces:
                out.extend(_atoms(text, a, b, size, count, separators[index + 1 :]))
            return out
    return _hard_cut(text, start, end, size, count)


def _hard_cut(
    text: str, start: int, end: int, size: int, count: Counter
) -> list[tuple[int, int, int]]:
    """No boundary left: cut by the measure itself (binary search on the length)."""
    out = []
    while start < end:
        low, high = start + 1, end
        while low < high:
            middle = (low + high + 1) // 2
            if count(text[start:middle]) <= size:
                low = middle
            else:
                high = middle - 1
        out.append((start, low, count(text[start:low])))
        start = low
    return out


def _pack(
    atoms: list[tuple[int, int, int]], size: int, overlap: int, count: Counter, text: str
) -> list[tuple[int, int]]:
    """Greedily join consecutive atoms up to `size`; a new chunk starts with the last
    atoms of the previous one that fit in `overlap`."""
    spans: list[tuple[int, int]] = []
    current: list[tuple[int, int, int]] = []
    total = 0
    for atom in atoms:
        if current and total + atom[2] > size:
            spans.append((current[0][0], current[-1][1]))
            kept: list[tuple[int, int, int]] = []
            kept_total = 0
            for previous in reversed(current):
                if kept_total + previous[2] > overlap or kept_total + previous[2] + atom[2] > size:
                    break
                kept.insert(0, previous)
                kept_total += previous[2]
            current, total = kept, kept_total
        current.append(atom)
        total += atom[2]
    if current:
        spans.append((current[0][0], current[-1][1]))
    return spans


def _headings(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), len(m.group(1)), m.group(2).strip()) for m in _HEADING.finditer(text)]


def _first_content(text: str, start: int, end: int) -> int:
    """The offset of the chunk's first line that is not a heading (its start if none):
    the heading path there is the one that describes the chunk's text."""
    offset = start
    for line in text[start:end].splitlines(keepends=True):
        if line.strip() and not _HEADING.match(line.strip()):
            return offset
        offset += len(line)
    return start


def _path_at(headings: list[tuple[int, int, str]], offset: int) -> list[str]:
    index = bisect.bisect_right([h[0] for h in headings], offset)
    path: list[tuple[int, str]] = []
    for _, level, title in headings[:index]:
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
    return [title for _, title in path]
