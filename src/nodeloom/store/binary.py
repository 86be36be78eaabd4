"""Binary content in the run store's blob area: uploads and downloads kept once, by digest.

A blob reference is the `BinaryRef` JSON shape with the scheme `blob:` and the store's
signature of the digest:

    {"$ref": "blob:<sha256>", "mime": "application/pdf", "size": 48213,
     "name": "q3.pdf", "sig": "<32 hex digits>"}

The bytes are written a chunk at a time to a temporary file, hashed on the way, then
renamed to their digest (`BlobDir.writer`): the same content is stored once, and memory
stays at one chunk whatever the size. Only the store mints the signature (an HMAC of the
digest under the key kept beside the blobs), so a reference typed into a flow, sent as a
webhook's JSON or returned by a Code node names no blob: `open` refuses it. When a run's
value holds a signed reference, the store records that the run holds the blob (the
`blob_refs` table): prune keeps it while the run is kept, and the download endpoint
serves it only for that run. See docs/files.md.

Synchronous file I/O: nodes and the server call it in a thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, BinaryIO

from nodeloom.files import detect_mime, safe_name
from nodeloom.store.blobs import DIGEST, BlobDir, BlobInfo, BlobWriter
from nodeloom.store.errors import NotFoundError
from nodeloom.values import BinaryRef

SCHEME = "blob:"
OCTET_STREAM = "application/octet-stream"
_KEYS = frozenset({"$ref", "mime", "size", "name", "sig"})
_HEAD = 4096


def binary_ref(info: BlobInfo, name: str, signature: str) -> dict[str, Any]:
    return {
        "$ref": SCHEME + info.sha256,
        "mime": info.mime,
        "size": info.size,
        "name": name,
        "sig": signature,
    }


def claimed_digest(value: Any) -> str | None:
    """The digest a value claims as a binary blob reference (its shape only: signed or
    not), else None."""
    if isinstance(value, BinaryRef):
        return None  # the in-memory shape carries no signature: never a blob reference
    if not (isinstance(value, Mapping) and value.keys() == _KEYS):
        return None
    ref = value.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(SCHEME):
        return None
    digest = ref[len(SCHEME) :]
    return digest if DIGEST.fullmatch(digest) else None


class BinaryWriter:
    """Bytes of one upload or download on their way into the blob area."""

    def __init__(self, blobs: BlobDir, name: str, mime: str | None) -> None:
        self.blobs = blobs
        self.name = safe_name(name)
        self.mime = (mime or "").split(";", 1)[0].strip().lower()
        self.head = b""
        self._writer: BlobWriter = blobs.writer(self.mime or OCTET_STREAM)

    @property
    def size(self) -> int:
        return self._writer.size

    def write(self, data: bytes) -> None:
        if len(self.head) < _HEAD:
            self.head += data[: _HEAD - len(self.head)]
        self._writer.write(data)

    def finish(self) -> dict[str, Any]:
        """Store the bytes under their digest; the signed reference."""
        if not self.mime or self.mime == OCTET_STREAM:
            self._writer.mime = detect_mime(self.name, self.head)
        info = self._writer.finish()
        return binary_ref(info, self.name, self.blobs.sign(info.sha256))

    def abort(self) -> None:
        self._writer.abort()


class BinaryBlobs:
    """The run store's blob area as nodes and the server see it (the `BinaryStore`
    protocol of `nodeloom.plugins`)."""

    def __init__(self, blobs: BlobDir) -> None:
        self.blobs = blobs

    def writer(self, name: str, mime: str | None = None) -> BinaryWriter:
        return BinaryWriter(self.blobs, name, mime)

    def is_ref(self, value: Any) -> bool:
        """Whether `value` has the shape of a blob reference (signed or not)."""
        return claimed_digest(value) is not None

    def digest(self, value: Any) -> str:
        """The digest of a reference this store minted; LookupError for any other."""
        digest = claimed_digest(value)
        if digest is None or not self.blobs.signed(digest, value.get("sig")):
            raise LookupError(
                "the value is not a blob reference this run store made (its signature does "
                "not match): references cannot be typed or forged, only passed on"
            )
        return digest

    def open(self, value: Any) -> BinaryIO:
        """The bytes of a reference this store minted (the caller closes the file);
        LookupError for a forged reference or a blob that was pruned."""
        digest = self.digest(value)
        try:
            return self.blobs.open(digest)
        except NotFoundError as exc:
            raise LookupError(str(exc)) from None
