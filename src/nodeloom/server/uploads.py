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
import contextlib
import hashlib
import os
import secrets
from typing import Any, BinaryIO

from starlette.datastructures import UploadFile
from starlette.requests import Request

from nodeloom.errors import NodeError
from nodeloom.files import detect_mime, file_ref, open_file, parent_dir
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
    """Copy the spooled part to uploads/<sha256>/<name>; its file reference."""
    name = safe_name(upload.filename)
    source: BinaryIO = upload.file
    source.seek(0)
    head = source.read(4096)
    source.seek(0)
    staging = [UPLOADS, f".{secrets.token_hex(8)}.part"]
    digest = hashlib.sha256()
    size = 0
    with parent_dir(staging, "/".join(staging), create=True) as folder:
        fd = open_file(folder, staging[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, staging[-1])
        try:
            with os.fdopen(fd, "wb") as target:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    target.write(chunk)
                    size += len(chunk)
            sha = digest.hexdigest()
            final = [UPLOADS, sha, name]
            with (
                parent_dir(final, "/".join(final), create=True) as into,
                contextlib.suppress(FileExistsError),  # the same content and name: kept once
            ):
                os.link(staging[-1], name, src_dir_fd=folder, dst_dir_fd=into)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(staging[-1], dir_fd=folder)
    declared = (upload.content_type or "").split(";", 1)[0].strip().lower()
    mime = declared if declared and declared != "application/octet-stream" else ""
    return file_ref(final, mime or detect_mime(name, head), size)


def safe_name(filename: str | None) -> str:
    """The client's file name, reduced to a plain name that cannot leave its folder."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable() and c != "\0").strip()
    if name in ("", ".", "..") or name.startswith("."):
        name = f"upload{name}" if name not in (".", "..") else "upload"
    return name[:200]
