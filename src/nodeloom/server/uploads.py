"""Webhook uploads: the file parts of a `multipart/form-data` body become file references.

Starlette parses the body as it arrives and spools each file part to a temporary file
(1 MB in memory at most); each is then copied, in 1 MB chunks and hashed on the way,
to `<files root>/uploads/<sha256>/<name>` (NODELOOM_FILES_ROOT, see docs/files.md). The
same content uploaded twice is kept once. The trigger's `body` holds, per form field,
its text or its file reference `{"$ref": "file:uploads/<sha256>/<name>", "mime", "size",
"name"}` (a list when a field repeats): never the bytes. Memory stays a few MB whatever
the upload's size; the body size limit (`--max-body-mb`) applies as to any request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from nodeloom.errors import NodeError
from nodeloom.files import Keeper
from nodeloom.server.errors import ApiError

UPLOADS = "uploads"
CHUNK = 1024 * 1024
MAX_FIELDS = 100


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


async def multipart_body(request: Request) -> dict[str, Any]:
    """The form's fields: text as text, files as file references under the files root."""
    form = await request.form(max_files=MAX_FIELDS, max_fields=MAX_FIELDS)
    body: dict[str, Any] = {}
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                value = await asyncio.to_thread(_keep, value)
            if name in body:
                earlier = body[name]
                body[name] = [*earlier, value] if isinstance(earlier, list) else [earlier, value]
            else:
                body[name] = value
    except NodeError as exc:  # no files root, or one the server cannot write to
        raise ApiError(422, exc.code, str(exc)) from None
    finally:
        await form.close()
    return body


def _keep(upload: UploadFile) -> dict[str, Any]:
    """Copy the spooled part into uploads/<sha256>/<name>; its file reference."""
    keeper = Keeper(UPLOADS, upload.filename or "upload")
    try:
        upload.file.seek(0)
        while chunk := upload.file.read(CHUNK):
            keeper.write(chunk)
    except BaseException:
        keeper.abort()
        raise
    return keeper.finish(upload.content_type)
