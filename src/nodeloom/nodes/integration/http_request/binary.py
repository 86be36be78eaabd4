"""HTTP Request and binary content: a non-text answer kept as a file, a file sent.

An answer whose media type is not text or JSON is never decoded: in a run recorded in a
run store it is streamed into the store's blob area (the answer's `body` is a `blob:`
reference), else, with a files root (NODELOOM_FILES_ROOT, docs/files.md), to
`downloads/<sha256>/<name>` under the root (a `file:` reference); up to
MAX_DOWNLOAD_BYTES, memory a chunk at a time. With neither, such an answer is read as
before (text, 10 MB). A reference of either kind as the request's `body` sends its bytes
(up to 10 MB), with its media type as Content-Type; with `multipart`, `body` is an object
of fields, text or references (file parts).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
from typing import Any
from urllib.parse import unquote

import httpx

from nodeloom.errors import NodeError
from nodeloom.files import ENV_ROOT, Keeper, kind_of_mime, open_content, ref_path
from nodeloom.net import ResponseTooLargeError, display_url
from nodeloom.plugins.contract import BinaryStore

DOWNLOADS = "downloads"
MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024
_BUFFER = 1024 * 1024
_FILENAME = re.compile(r"""filename\*?=(?:UTF-8'')?"?([^";]+)"?""", re.IGNORECASE)


def keeps_as_file(response: httpx.Response, blobs: BinaryStore | None = None) -> bool:
    """A binary answer, and a run store or a files root to keep it in."""
    mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    binary = kind_of_mime(mime or "application/octet-stream") == "binary"
    somewhere = blobs is not None or bool(os.environ.get(ENV_ROOT))
    return binary and somewhere and response.request.method != "HEAD"


async def download(
    response: httpx.Response, *, max_bytes: int, blobs: BinaryStore | None = None
) -> dict[str, Any]:
    """Stream the answer into the run store's blob area (a blob reference), else into
    downloads/<sha256>/<name> under the files root (a file reference)."""
    content_type = response.headers.get("content-type")
    keeper: Any
    if blobs is not None:
        keeper = await asyncio.to_thread(blobs.writer, _name(response), content_type)
    else:
        keeper = await asyncio.to_thread(Keeper, DOWNLOADS, _name(response))
    pending = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            pending += chunk
            if keeper.size + len(pending) > max_bytes:
                shown = f"{response.request.method} {display_url(response.request.url)}"
                raise ResponseTooLargeError(
                    f"the response to {shown} is larger than {max_bytes:,} bytes, the most "
                    "kept as a file",
                    details={"max_bytes": max_bytes, "status": response.status_code},
                )
            if len(pending) >= _BUFFER:
                await asyncio.to_thread(keeper.write, bytes(pending))
                pending.clear()
        if pending:
            await asyncio.to_thread(keeper.write, bytes(pending))
    except BaseException:
        await asyncio.to_thread(keeper.abort)
        raise
    if blobs is not None:
        return await asyncio.to_thread(keeper.finish)
    return await asyncio.to_thread(keeper.finish, content_type)


def file_body(
    value: Any, max_bytes: int, blobs: BinaryStore | None = None
) -> tuple[bytes, str] | None:
    """The bytes and media type of a file or blob reference given as the body, else
    None."""
    opened = open_content(value, blobs, "body")
    if opened is None:
        return None
    with opened as file:
        content = file.read(max_bytes + 1)
    if len(content) > max_bytes:
        shown = ref_path(value) or str(value.get("name") if isinstance(value, dict) else "")
        raise NodeError(
            f"the content {shown!r} is larger than {max_bytes // (1024 * 1024)} MB, the most "
            "HTTP Request sends as a body.",
            code="invalid_parameter",
            retryable=False,
            details={"field": "body"},
        )
    mime = value.get("mime") if isinstance(value, dict) else getattr(value, "mime", None)
    return content, str(mime or "application/octet-stream")


def multipart_body(
    value: Any, max_bytes: int, blobs: BinaryStore | None = None
) -> tuple[bytes, str]:
    """`{field: text or file reference}` as multipart/form-data (files as file parts)."""
    if not isinstance(value, dict) or not value:
        raise NodeError(
            'with multipart on, body is an object of fields, e.g. {"note": "scan", "file": '
            "{{ $json }}} where the file is a file reference",
            code="invalid_parameter",
            retryable=False,
            details={"field": "body"},
        )
    boundary = secrets.token_hex(16)
    parts: list[bytes] = []
    size = 0
    for name, item in value.items():
        for one in item if isinstance(item, list) else [item]:
            sent = file_body(one, max_bytes - size, blobs)
            if sent is not None:
                content, mime = sent
                filename = one.get("name") if isinstance(one, dict) else None
                filename = filename or (ref_path(one) or "file").rsplit("/", 1)[-1]
                head = (
                    f'Content-Disposition: form-data; name="{_quoted(str(name))}"; '
                    f'filename="{_quoted(str(filename))}"\r\nContent-Type: {mime}\r\n'
                )
            elif isinstance(one, (str, int, float, bool)):
                text = one if isinstance(one, str) else json.dumps(one)
                content = text.encode()
                head = f'Content-Disposition: form-data; name="{_quoted(str(name))}"\r\n'
            else:
                raise NodeError(
                    f"multipart field {name!r} must be text, a number, a boolean or a file "
                    "reference",
                    code="invalid_parameter",
                    retryable=False,
                    details={"field": "body"},
                )
            part = f"--{boundary}\r\n{head}\r\n".encode() + content + b"\r\n"
            size += len(part)
            if size > max_bytes:
                raise NodeError(
                    f"the multipart body passes {max_bytes // (1024 * 1024)} MB, the most HTTP "
                    "Request sends.",
                    code="invalid_parameter",
                    retryable=False,
                    details={"field": "body"},
                )
            parts.append(part)
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quoted(text: str) -> str:
    """A form-data name or file name inside quotes: no quote, no line break (WHATWG)."""
    return text.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")  # as browsers do


def _name(response: httpx.Response) -> str:
    disposition = response.headers.get("content-disposition", "")
    found = _FILENAME.search(disposition)
    if found:
        return unquote(found.group(1))
    return unquote(response.request.url.path.rsplit("/", 1)[-1]) or "download"
