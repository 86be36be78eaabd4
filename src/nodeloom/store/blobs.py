"""The blob directory: large JSON values as files, content-addressed by sha256.

Layout: `<blob dir>/<store id>/<first two hex digits>/<sha256>`, one folder per database
so that two databases sharing a data directory never delete each other's blobs. A blob
is written to `tmp/` beside them, fsynced, then renamed into place: a reader sees a whole
file or none. Writing the same content twice stores it once.

Every method is synchronous file I/O; the repository calls the heavy ones in a thread.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import mmap
import os
import re
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nodeloom.store.errors import NotFoundError, StoreFullError, StoreUnavailableError

CHUNK = 1 << 20  # bytes written or read at a time
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
DIGEST = re.compile(r"[0-9a-f]{64}")  # a blob's name: its sha256 in lowercase hex


JSON_MIME = "application/json"
_KEY_FILE = "key"  # beside the blob folders: the secret that signs binary references


@dataclass(frozen=True, slots=True)
class BlobInfo:
    """A blob that was written (or already existed): its sha256, size in bytes, and the
    media type of its content (JSON for the store's large values)."""

    sha256: str
    size: int
    mime: str = JSON_MIME


class BlobDir:
    """The files of one store's blobs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self._secret: bytes | None = None

    def path(self, sha256: str) -> Path:
        """The file of a blob. The digest must be 64 lowercase hex digits and the file lie
        inside the folder: a reference is never a way to name another file."""
        if not isinstance(sha256, str) or DIGEST.fullmatch(sha256) is None:
            raise NotFoundError(
                f"{str(sha256)[:80]!r} is not a blob digest (64 lowercase hex digits); "
                "only references the store wrote can be read"
            )
        path = self.root / sha256[:2] / sha256
        if os.path.commonpath([self.root, os.path.normpath(path)]) != os.path.normpath(self.root):
            raise NotFoundError(f"blob {sha256} lies outside the blob folder {self.root}")
        return path

    def write_chunks(self, chunks: Iterable[str]) -> BlobInfo:
        """Write text chunks (UTF-8) as one blob; memory stays at about one CHUNK."""
        return self.write_bytes(_encoded(chunks))

    def write_bytes(self, chunks: Iterable[bytes], mime: str = JSON_MIME) -> BlobInfo:
        """Write byte chunks as one blob; memory stays at about one chunk."""
        writer = self.writer(mime)
        try:
            for data in chunks:
                writer.write(data)
        except BaseException:
            writer.abort()
            raise
        return writer.finish()

    def writer(self, mime: str = JSON_MIME) -> BlobWriter:
        """A blob written piece by piece (`write`, then `finish` or `abort`)."""
        return BlobWriter(self, mime)

    def write_text(self, text: str) -> BlobInfo:
        return self.write_chunks(text[i : i + CHUNK] for i in range(0, max(len(text), 1), CHUNK))

    def sign(self, sha256: str) -> str:
        """The signature of a binary reference to this blob: an HMAC of the digest under
        this store's key. Only the store mints it, so a reference typed or forged
        elsewhere (a webhook's JSON, a Code node's result) names no blob."""
        return hmac.new(self._key(), sha256.encode(), hashlib.sha256).hexdigest()[:32]

    def signed(self, sha256: str, signature: Any) -> bool:
        return isinstance(signature, str) and hmac.compare_digest(self.sign(sha256), signature)

    def _key(self) -> bytes:
        """This store's 32-byte key, made once (written whole, then linked into place: a
        racing process reads either no key or the whole one)."""
        if self._secret is None:
            path = self.root / _KEY_FILE
            try:
                if not path.exists():
                    self.tmp.mkdir(parents=True, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(dir=self.tmp, suffix=".key")
                    try:
                        with os.fdopen(fd, "wb") as file:
                            file.write(secrets.token_bytes(32))
                            file.flush()
                            os.fsync(file.fileno())
                        with contextlib.suppress(FileExistsError):  # another one won
                            os.link(tmp, path)
                    finally:
                        _unlink(Path(tmp))
                self._secret = path.read_bytes()
            except OSError as exc:
                raise self._error(exc) from exc
        return self._secret

    def load(self, sha256: str) -> Any:
        """The blob's JSON value. The file is mapped, not read: the only copies in memory
        are the decoded text (briefly) and the value."""
        path = self.path(sha256)
        try:
            with open(path, "rb") as file:
                if os.fstat(file.fileno()).st_size == 0:
                    return json.loads("")
                with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    if _plain_string(mapped):  # decoded straight from the file: one copy
                        with memoryview(mapped) as view, view[1:-1] as inner:
                            return str(inner, "utf-8", "surrogatepass")
                    text = str(mapped, "utf-8", "surrogatepass")
        except FileNotFoundError:
            raise self._missing(sha256) from None
        except OSError as exc:
            raise self._error(exc) from exc
        return json.loads(text)

    def open(self, sha256: str) -> BinaryIO:
        """The blob's bytes as a binary file (the caller closes it)."""
        try:
            return open(self.path(sha256), "rb")
        except FileNotFoundError:
            raise self._missing(sha256) from None
        except OSError as exc:
            raise self._error(exc) from exc

    def delete(self, sha256: str, *, unless_newer_than: float) -> int:
        """Remove a blob unless it was written or touched since `unless_newer_than`
        (a timestamp): a writer that just stored the same content keeps it. Returns the
        bytes freed."""
        path = self.path(sha256)
        try:
            stat = path.stat()
            if stat.st_mtime >= unless_newer_than:
                return 0
            path.unlink()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise self._error(exc) from exc
        return stat.st_size

    def sweep_partial(self, older_than: float) -> int:
        """Remove temporary files left by writers that died; returns bytes freed."""
        freed = 0
        if not self.tmp.is_dir():
            return 0
        for path in self.tmp.iterdir():
            try:
                stat = path.stat()
                if stat.st_mtime < older_than:
                    path.unlink()
                    freed += stat.st_size
            except FileNotFoundError:
                continue
        return freed

    def _missing(self, sha256: str) -> NotFoundError:
        return NotFoundError(
            f"blob {sha256} is missing from {self.root}: the blob directory was moved or "
            "only partly restored; restore it from the same backup as the database"
        )

    def _error(self, exc: OSError) -> Exception:
        if exc.errno in _FULL_ERRNOS:
            return StoreFullError(
                f"the blob directory {self.root} is full ({exc.strerror}); nothing was "
                "stored. Free disk space or prune old runs (`Store.prune`)"
            )
        return StoreUnavailableError(
            f"cannot use the blob directory {self.root}: {exc}. Check that it exists and "
            "is writable (Store.open(blob_dir=...))"
        )


class BlobWriter:
    """One blob written in pieces: to a temporary file in `tmp/`, hashed on the way;
    `finish` fsyncs it and renames it to its digest (the same content is kept once)."""

    def __init__(self, blobs: BlobDir, mime: str = JSON_MIME) -> None:
        self.blobs = blobs
        self.mime = mime
        self.size = 0
        self._digest = hashlib.sha256()
        try:
            blobs.tmp.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(dir=blobs.tmp, suffix=".part")
        except OSError as exc:
            raise blobs._error(exc) from exc
        self._file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self._digest.update(data)
        try:
            self._file.write(data)
        except OSError as exc:
            raise self.blobs._error(exc) from exc
        self.size += len(data)

    def finish(self) -> BlobInfo:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            sha256 = self._digest.hexdigest()
            final = self.blobs.path(sha256)
            if final.exists():
                os.utime(final)  # fresh: a concurrent prune keeps it
                os.unlink(self._tmp)
            else:
                final.parent.mkdir(exist_ok=True)
                os.replace(self._tmp, final)
        except OSError as exc:
            self.abort()
            raise self.blobs._error(exc) from exc
        return BlobInfo(sha256, self.size, self.mime)

    def abort(self) -> None:
        """Remove the temporary file (nothing was stored)."""
        self._file.close()
        _unlink(Path(self._tmp))


def _encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    """UTF-8 bytes in pieces of about CHUNK."""
    pending: list[str] = []
    count = 0
    for chunk in chunks:
        pending.append(chunk)
        count += len(chunk)
        if count >= CHUNK:
            yield "".join(pending).encode("utf-8", "surrogatepass")
            pending.clear()
            count = 0
    if pending:
        yield "".join(pending).encode("utf-8", "surrogatepass")


def _plain_string(mapped: mmap.mmap) -> bool:
    """A JSON string without escapes: its content is the value's UTF-8 as it is."""
    return (
        len(mapped) >= 2
        and mapped[:1] == b'"'
        and mapped[-1:] == b'"'
        and mapped.find(b"\\") == -1
        and mapped.find(b'"', 1, len(mapped) - 1) == -1
    )


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
