"""Keeping content under the files root, named by its sha256: `<folder>/<sha256>/<name>`.

For content that arrives in pieces (a webhook upload, an HTTP response): each piece is
written to a staging file in `<folder>/` and hashed on the way; `finish` links the file
into place (the same content under the same name is kept once) and returns its file
reference. Synchronous file I/O: call it in a thread.

    keeper = Keeper("uploads", "scan.pdf")
    keeper.write(chunk) ...
    ref = keeper.finish(mime, head)   # or keeper.abort()
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from typing import Any

from nodeloom.files.paths import open_file, parent_dir
from nodeloom.files.refs import OCTET_STREAM, detect_mime, file_ref

_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


class Keeper:
    def __init__(self, folder: str, name: str) -> None:
        self.folder = folder
        self.name = safe_name(name)
        self.staging = [folder, f".{secrets.token_hex(8)}.part"]
        self.digest = hashlib.sha256()
        self.size = 0
        self.head = b""
        shown = "/".join(self.staging)
        with parent_dir(self.staging, shown, create=True) as parent:
            self._file = os.fdopen(open_file(parent, self.staging[-1], _WRITE, shown), "wb")

    def write(self, chunk: bytes) -> None:
        if len(self.head) < 4096:
            self.head += chunk[: 4096 - len(self.head)]
        self.digest.update(chunk)
        self._file.write(chunk)
        self.size += len(chunk)

    def finish(self, mime: str | None = None) -> dict[str, Any]:
        """Link the content into `<folder>/<sha256>/<name>`; its file reference."""
        self._file.close()
        final = [self.folder, self.digest.hexdigest(), self.name]
        try:
            with (
                parent_dir(self.staging, "/".join(self.staging), create=False) as staging,
                parent_dir(final, "/".join(final), create=True) as into,
                contextlib.suppress(FileExistsError),  # the same content and name: kept once
            ):
                os.link(self.staging[-1], self.name, src_dir_fd=staging, dst_dir_fd=into)
        finally:
            self.abort()
        given = (mime or "").split(";", 1)[0].strip().lower()
        if not given or given == OCTET_STREAM:
            given = detect_mime(self.name, self.head)
        return file_ref(final, given, self.size)

    def abort(self) -> None:
        """Remove the staging file (what `finish` linked into place stays)."""
        self._file.close()
        with (
            contextlib.suppress(OSError),
            parent_dir(self.staging, "/".join(self.staging), create=False) as parent,
        ):
            os.unlink(self.staging[-1], dir_fd=parent)


def safe_name(filename: str | None, default: str = "upload") -> str:
    """A client's or a server's file name, reduced to a plain name that cannot leave its
    folder (no separators, no leading dot, printable, at most 200 characters)."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip().lstrip(".")
    return name[:200] or default
