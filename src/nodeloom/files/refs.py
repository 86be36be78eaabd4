"""File references: a `BinaryRef` that points at a file under the files root.

    {"$ref": "file:reports/q3.pdf", "mime": "application/pdf", "size": 48213, "name": "q3.pdf"}

It is the `BinaryRef` JSON shape (`nodeloom.values`) with the scheme `file:` and the
path relative to the root, plus the file's `name`. It names a path, not content: a file
changed after the reference was made reads changed. A value that merely looks like one
(typed into a flow, returned by a Code node) gains nothing: it is opened through the same
checked walk as a `path` parameter, so it reaches only what Read File could.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import BinaryRef

SCHEME = "file:"
OCTET_STREAM = "application/octet-stream"
_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/sql",
    "application/x-sh",
}
# Leading bytes of common binary formats, for files whose name says nothing.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)


def file_ref(parts: list[str], mime: str, size: int) -> dict[str, Any]:
    return {"$ref": SCHEME + "/".join(parts), "mime": mime, "size": size, "name": parts[-1]}


def ref_path(value: Any) -> str | None:
    """The path of a file reference (a BinaryRef or its JSON), else None."""
    if isinstance(value, BinaryRef):
        ref = value.ref
    elif isinstance(value, Mapping) and isinstance(value.get("$ref"), str):
        ref = value["$ref"]
    else:
        return None
    return ref[len(SCHEME) :] if ref.startswith(SCHEME) else None


def is_ref(value: Any) -> bool:
    return isinstance(value, BinaryRef) or (
        isinstance(value, Mapping) and isinstance(value.get("$ref"), str)
    )


def detect_mime(name: str, head: bytes) -> str:
    """The media type by the file's extension, else by its first bytes."""
    guessed, _ = mimetypes.guess_type(name, strict=False)
    if guessed:
        return guessed
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if b"\0" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 3:  # not just a character cut at the end
                return OCTET_STREAM
        return "text/plain"
    return OCTET_STREAM


def kind_of_mime(mime: str) -> str:
    """How Read File reads a type by default: json, text or binary."""
    if mime == "application/json" or mime.endswith("+json"):
        return "json"
    if mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith("+xml"):
        return "text"
    return "binary"
