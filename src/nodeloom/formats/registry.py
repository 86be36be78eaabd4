"""Which formats exist, and finding the one a document is in."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from nodeloom.formats.options import FormatOptions
from nodeloom.graph.document import read_document


class FormatLoader(Protocol):
    name: str

    def detect(self, document: Any, path: Path | None) -> bool: ...

    def to_graph(self, document: Any, options: FormatOptions) -> dict[str, Any]: ...


# Tried in order; the native format last (it accepts any {"nodes": [...]}). Each entry is
# "module:attribute", imported on first use so loading a native graph imports no loader.
FORMATS: tuple[str, ...] = (
    "nodeloom.formats.workflow:loader",
    "nodeloom.formats.plan:loader",  # before ethan: its markers (node_type) are narrower
    "nodeloom.formats.ethan:loader",
)


def _loaders() -> list[FormatLoader]:
    loaders = []
    for entry in FORMATS:
        module, _, attribute = entry.partition(":")
        try:
            loaders.append(getattr(importlib.import_module(module), attribute))
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return loaders


def detect_format(document: Any, path: Path | None = None) -> FormatLoader | None:
    """The loader of the document's format, or None for the native format."""
    if isinstance(document, Mapping) and document.get("format") == "nodeloom":
        return None
    for loader in _loaders():
        if loader.detect(document, path):
            return loader
    return None


def read_graph(
    source: str | Path | Mapping[str, Any], options: FormatOptions | None = None
) -> tuple[dict[str, Any], str]:
    """The native graph document of `source` (a path, JSON text or a dict) and the name of
    the format it was in ("native" when it already was)."""
    path = None
    if isinstance(source, (str, Path)) and not str(source).lstrip().startswith(("{", "[")):
        path = Path(source)
    document = read_document(source)
    if options is None:
        options = FormatOptions(base_dir=path.resolve().parent if path else Path.cwd())
    loader = detect_format(document, path)
    if loader is None:
        return document, "native"
    return loader.to_graph(document, options), loader.name
