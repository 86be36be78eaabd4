"""Where documents come from: paths, globs, folders, uploaded files and URLs.

    report = await load(["docs/", "notes/*.md", "https://example.com/faq.html"])
    report.documents   # [Document, ...] in the order the sources were named
    report.errors      # [{"source", "code", "message"}, ...]: one per file that failed

A file that cannot be read is reported and the others still load (`strict=True` raises
the first failure instead). URLs go through nodeloom.net's guarded client, so they cannot
reach loopback or private addresses unless the policy allows it. A source's name in
`metadata.source` is the path as given (a folder's files: the folder joined with the
file's relative path), so the same command gives the same ids on every machine.
"""

from __future__ import annotations

import asyncio
import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodeloom.knowledge.errors import DocumentLoadError
from nodeloom.knowledge.formats import MIMES, Document, parse

MAX_URL_BYTES = 50 * 1024 * 1024


@dataclass(slots=True)
class LoadReport:
    documents: list[Document] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    files: int = 0  # files and URLs read successfully


def expand(spec: str) -> list[str]:
    """The files a path, glob or folder names (sorted; a folder is walked for supported
    extensions). A name that matches nothing is returned as is, to be reported."""
    if any(ch in spec for ch in "*?["):
        return sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
    path = Path(spec)
    if path.is_dir():
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if Path(name).suffix.lower() in MIMES and not name.startswith("."):
                    found.append(os.path.join(root, name))
        return found
    return [spec]


def _is_url(spec: str) -> bool:
    return spec.startswith(("http://", "https://"))


async def load(
    sources: Iterable[Any],
    *,
    strict: bool = False,
    policy: Any = None,
    resolve_ref: Any = None,
    progress: Any = None,
) -> LoadReport:
    """Load every source. A source is a path/glob/folder/URL string, a `BinaryRef` (or its
    JSON `{"$ref", "mime"}`) whose ref is a file path (`file:` prefix allowed) or is
    resolved by `resolve_ref(ref) -> Path`, or an object `{"name", "text"}`.
    `progress(done, total)` (sync or async) is called after each file."""
    report = LoadReport()
    for source in sources:
        for item in _items(source):
            try:
                documents = await _load_one(item, policy, resolve_ref)
            except DocumentLoadError as exc:
                if strict:
                    raise
                report.errors.append({"source": exc.source, "code": exc.code, "message": str(exc)})
                continue
            report.files += 1
            report.documents.extend(documents)
    return report


def _items(source: Any) -> list[Any]:
    if isinstance(source, str) and not _is_url(source):
        return list(expand(source)) or [("empty", source)]
    return [source]


async def _load_one(item: Any, policy: Any, resolve_ref: Any) -> list[Document]:
    if isinstance(item, tuple):
        raise DocumentLoadError(item[1], "the pattern or folder matched no supported file")
    if isinstance(item, str):
        if _is_url(item):
            return await _load_url(item, policy)
        return await asyncio.to_thread(_load_file, Path(item), item, None)
    ref, mime, name = _reference(item)
    if ref is None:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            return [Document.from_json(item)]
        raise DocumentLoadError(
            repr(item)[:80],
            "expected a path, a URL, a file reference {'$ref', 'mime'} or {'name', 'text'}",
        )
    path = resolve_ref(ref) if resolve_ref is not None else None
    if path is None:
        path = Path(ref.removeprefix("file:"))
    return await asyncio.to_thread(_load_file, Path(path), name or Path(path).name, mime)


def _reference(item: Any) -> tuple[str | None, str | None, str | None]:
    ref = getattr(item, "ref", None)
    if ref is not None:
        return str(ref), getattr(item, "mime", None), None
    if isinstance(item, dict) and isinstance(item.get("$ref"), str):
        return item["$ref"], item.get("mime"), item.get("name")
    return None, None, None


def _load_file(path: Path, source: str, mime: str | None) -> list[Document]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentLoadError(source, "no such file") from None
    except IsADirectoryError:
        raise DocumentLoadError(source, "is a folder with no supported file") from None
    except OSError as exc:
        raise DocumentLoadError(source, exc.strerror or str(exc)) from None
    generic = mime in (None, "", "application/octet-stream")
    return parse(data, source, None if generic else mime)


async def _load_url(url: str, policy: Any) -> list[Document]:
    from nodeloom.net import guarded_stream, read_body

    try:
        async with guarded_stream("GET", url, policy=policy, timeout=30.0) as response:
            if response.status_code >= 400:
                raise DocumentLoadError(url, f"HTTP {response.status_code}")
            body = await read_body(response, max_bytes=MAX_URL_BYTES)
            mime = response.headers.get("content-type")
    except DocumentLoadError:
        raise
    except Exception as exc:  # refused by the guard, DNS, TLS, timeout: report, go on
        raise DocumentLoadError(url, str(exc)) from None
    return await asyncio.to_thread(parse, body, url, mime)
