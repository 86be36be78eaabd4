"""The bytes behind a `BinaryRef`, whichever of the two kinds it is:

    file:<path>     a file under the files root (Read File, HTTP Request without a run
                    store): opened through the checked walk of `paths.open_read`
    blob:<sha256>   content kept once in the run store's blob area (webhook uploads, HTTP
                    downloads of a recorded run): opened through `Services.blobs`, which
                    refuses a reference it did not sign

Used by Write File (copying content) and HTTP Request (sending it). See docs/files.md.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from nodeloom.errors import NodeError
from nodeloom.files.paths import open_read
from nodeloom.files.refs import is_ref, ref_path
from nodeloom.plugins.services import BinaryStore


def open_content(value: Any, blobs: BinaryStore | None, field: str) -> BinaryIO | None:
    """The bytes of a file or blob reference (the caller closes the file); None when
    `value` is no reference at all. Synchronous: call it in a thread."""
    if not is_ref(value):
        return None
    path = ref_path(value)
    if path is not None:
        return open_read(path, field)
    shown = str(value.get("$ref") if isinstance(value, dict) else getattr(value, "ref", ""))
    if blobs is not None and shown.startswith("blob:"):
        try:
            return blobs.open(value)
        except LookupError as exc:
            raise NodeError(
                f"`{field}` holds a blob reference that cannot be read: {exc}. Pass on the "
                "reference a webhook upload or an HTTP Request made in this run store.",
                code="invalid_parameter",
                retryable=False,
                details={"field": field},
            ) from None
    where = "a run without a run store" if blobs is None else "this run"
    raise NodeError(
        f"`{field}` is a reference ({shown[:80]!r}) that names no content {where} can read: "
        "only `file:` references under the files root and `blob:` references of the run "
        "store hold bytes (a large JSON value's reference is read as the value itself).",
        code="invalid_parameter",
        retryable=False,
        details={"field": field},
    )
