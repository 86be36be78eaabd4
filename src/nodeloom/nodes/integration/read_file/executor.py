"""Read File: open the file through `nodeloom.files` (no link followed, nothing outside
the root), decide how to read it from its media type, and read it in a thread."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.files import detect_mime, file_ref, file_target, kind_of_mime, open_read
from nodeloom.nodes.integration.read_file.definition import READ_AS
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

MAX_TEXT_BYTES = 10 * 1024 * 1024
_HEAD = 4096


class ReadFileExecutor:
    node_type = "read-file"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        target = file_target(data, "Read File", "as", READ_AS, "auto")
        read_as = target.choice
        output = await asyncio.to_thread(read, target.path, target.parts, read_as)
        return ExecutionResult({"output": output})


def read(path: str, parts: list[str], read_as: str) -> Any:
    with open_read(path) as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(_HEAD)
        mime = detect_mime(parts[-1], head)
        kind = kind_of_mime(mime) if read_as == "auto" else read_as
        if kind == "binary":
            return file_ref(parts, mime, size)
        if size > MAX_TEXT_BYTES:
            raise NodeError(
                f"{path!r} is {size:,} bytes; reading as {kind} is limited to "
                f"{MAX_TEXT_BYTES:,}. Read it as binary (a file reference) and stream it on.",
                code="file_too_large",
                retryable=False,
                details={"field": "as", "path": path, "size": size},
            )
        content = head + file.read(MAX_TEXT_BYTES + 1 - len(head))
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NodeError(
            f"{path!r} is not UTF-8 text (byte {exc.start} is {content[exc.start]:#04x}; its "
            f"type looks like {mime}). Read it with as: binary.",
            code="invalid_file_content",
            retryable=False,
            details={"field": "as", "path": path},
        ) from None
    if kind == "text":
        return text
    try:
        return json.loads(text)
    except ValueError as exc:
        raise NodeError(
            f"{path!r} is not valid JSON: {exc}. Read it with as: text to see it.",
            code="invalid_file_content",
            retryable=False,
            details={"field": "as", "path": path},
        ) from None


executor = ReadFileExecutor()
