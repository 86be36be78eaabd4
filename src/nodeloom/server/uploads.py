"""Webhook uploads: the file parts of a `multipart/form-data` body become blob references.

Starlette parses the body as it arrives and spools each file part to a temporary file
(1 MB in memory at most); each is then copied, in 1 MB chunks and hashed on the way,
into the run store's blob area (`nodeloom.store.binary`): a temporary file renamed to
its sha256, so the same content uploaded twice is kept once. The trigger's `body` holds,
per form field, its text or its blob reference `{"$ref": "blob:<sha256>", "mime", "size",
"name", "sig"}` (a list when a field repeats): never the bytes. Memory stays a few MB
whatever the upload's size; the body size limit (`--max-body-mb`) applies as to any
request. The run holds the blobs its trigger references (prune keeps them with it, and
`GET /api/runs/{run_id}/files/{sha256}` serves them). See docs/files.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from nodeloom.plugins.contract import BinaryStore

CHUNK = 1024 * 1024
MAX_FIELDS = 100


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


async def multipart_body(request: Request, blobs: BinaryStore) -> dict[str, Any]:
    """The form's fields: text as text, files as blob references of the run store."""
    form = await request.form(max_files=MAX_FIELDS, max_fields=MAX_FIELDS)
    body: dict[str, Any] = {}
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                value = await asyncio.to_thread(_keep, value, blobs)
            if name in body:
                earlier = body[name]
                body[name] = [*earlier, value] if isinstance(earlier, list) else [earlier, value]
            else:
                body[name] = value
    finally:  # a full or unwritable blob folder: 503 store_full / store_unavailable
        await form.close()
    return body


def _keep(upload: UploadFile, blobs: BinaryStore) -> dict[str, Any]:
    """Copy the spooled part into the blob area; its blob reference."""
    writer = blobs.writer(upload.filename or "upload", upload.content_type)
    try:
        upload.file.seek(0)
        while chunk := upload.file.read(CHUNK):
            writer.write(chunk)
    except BaseException:
        writer.abort()
        raise
    return writer.finish()
