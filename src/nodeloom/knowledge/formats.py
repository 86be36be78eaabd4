"""Bytes of one file -> documents: txt, md, html, pdf, docx, csv, json.

    parse(data, source="guide.pdf", mime=None) -> [Document, ...]

A PDF gives one document per page (metadata `page`, from 1); every other format gives
one document. Formats are chosen by MIME type, else by the file's extension. A DOCX's
headings become Markdown headings, so the markdown chunker keeps their path.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import mimetypes
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Any

from nodeloom.knowledge.errors import DocumentLoadError

MIMES = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".csv": "text/csv",
    ".json": "application/json",
}
SUPPORTED = tuple(sorted(MIMES))


@dataclass(frozen=True, slots=True)
class Document:
    """A loaded text: `id` is stable for its source (and page)."""

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "metadata": dict(self.metadata)}

    @classmethod
    def from_json(cls, value: Any) -> Document:
        if isinstance(value, str):
            return cls(document_id("text", None), value, {"source": "text", "mime": "text/plain"})
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            raise ValueError(
                'a document is {"id", "text", "metadata"} (or a plain string); '
                f"received {type(value).__name__}"
            )
        metadata = dict(value.get("metadata") or {})
        metadata.setdefault("source", str(value.get("id") or "text"))
        identifier = value.get("id") or document_id(metadata["source"], metadata.get("page"))
        return cls(str(identifier), value["text"], metadata)


def document_id(source: str, page: int | None) -> str:
    key = source if page is None else f"{source}#page={page}"
    return "doc_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def mime_of(name: str, declared: str | None = None) -> str:
    """The MIME type that decides the parser: a declared one we know, else the extension."""
    if declared:
        base = declared.split(";")[0].strip().lower()
        if base in MIMES.values():
            return base
    suffix = PurePosixPath(name.split("?")[0]).suffix.lower()
    if suffix in MIMES:
        return MIMES[suffix]
    if declared and declared.split(";")[0].strip().lower().startswith("text/"):
        return "text/plain"
    guessed = mimetypes.guess_type(name)[0]
    return guessed or (declared or "application/octet-stream")


def parse(data: bytes, source: str, mime: str | None = None) -> list[Document]:
    """The documents in one file's bytes; DocumentLoadError if it cannot be read."""
    kind = mime_of(source, mime)
    parser = _PARSERS.get(kind)
    if parser is None:
        raise DocumentLoadError(
            source,
            f"unsupported type {kind!r}; supported extensions: {', '.join(SUPPORTED)}",
        )
    try:
        pages = parser(data)
    except DocumentLoadError:
        raise
    except Exception as exc:  # a broken file of a known type: say which and why
        raise DocumentLoadError(source, f"not a readable {kind} file ({exc})") from None
    documents = []
    for page, title, text in pages:
        metadata: dict[str, Any] = {"source": source, "mime": kind}
        if title:
            metadata["title"] = title
        if page is not None:
            metadata["page"] = page
        documents.append(Document(document_id(source, page), text, metadata))
    return documents


Page = tuple[int | None, str | None, str]  # (page number, title, text)


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n")


def _text(data: bytes) -> list[Page]:
    return [(None, None, _decode(data))]


def _markdown(data: bytes) -> list[Page]:
    text = _decode(data)
    heading = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
    return [(None, heading.group(1) if heading else None, text)]


class _HTMLText(HTMLParser):
    SKIP = {"script", "style", "noscript", "template", "head"}
    BLOCK = {"p", "div", "br", "li", "tr", "section", "article", "pre", "table", "ul", "ol"}
    HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skip += 1
        elif tag in self.HEADINGS:
            self.parts.append("\n\n" + "#" * self.HEADINGS[tag] + " ")
        elif tag in self.BLOCK:
            self.parts.append("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in self.HEADINGS or tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.parts.append(data)


def _html(data: bytes) -> list[Page]:
    parser = _HTMLText()
    parser.feed(_decode(data))
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(parser.title).split()) or None
    return [(None, title, text)]


def _pdf(data: bytes) -> list[Page]:
    import logging

    from pypdf import PdfReader

    # pypdf logs each repair it attempts; a file it cannot read is reported by us instead.
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    reader = PdfReader(io.BytesIO(data))
    title = None
    if reader.metadata is not None and reader.metadata.title:
        title = str(reader.metadata.title)
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        text = (page.extract_text() or "").strip()
        if text:
            pages.append((number, title, text))
    return pages


def _docx(data: bytes) -> list[Page]:
    import docx

    document = docx.Document(io.BytesIO(data))
    lines = []
    for paragraph in document.paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        text = paragraph.text.strip()
        if not text:
            continue
        level = re.fullmatch(r"Heading (\d)", style or "")
        if level:
            lines.append("#" * int(level.group(1)) + " " + text)
        elif style == "Title":
            lines.append("# " + text)
        else:
            lines.append(text)
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text.strip() for cell in row.cells))
    title = document.core_properties.title or None
    return [(None, title, "\n\n".join(lines))]


def _csv(data: bytes) -> list[Page]:
    rows = list(csv.reader(io.StringIO(_decode(data))))
    if not rows:
        return [(None, None, "")]
    header, body = rows[0], rows[1:]
    lines = [
        "; ".join(f"{name}: {value}" for name, value in zip(header, row, strict=False))
        for row in body
    ]
    return [(None, None, "\n".join(lines))]


def _json(data: bytes) -> list[Page]:
    value = json.loads(_decode(data))
    title = value.get("title") if isinstance(value, dict) else None
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return [(None, title if isinstance(title, str) else None, text)]


_PARSERS: dict[str, Callable[[bytes], list[Page]]] = {
    "text/plain": _text,
    "text/markdown": _markdown,
    "text/html": _html,
    "application/pdf": _pdf,
    MIMES[".docx"]: _docx,
    "text/csv": _csv,
    "application/json": _json,
}
