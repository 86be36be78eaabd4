"""Write File: encode the content, then write it through `nodeloom.files` in a thread.

`overwrite` writes a temporary file beside the target and renames it over the target,
so a reader never sees half a file. The content of a reference, a file under the root
(`file:`) or a blob of the run store (`blob:`, e.g. a webhook upload), is copied in
chunks: content of any size passes with a few MB of memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from typing import Any, BinaryIO

from nodeloom.errors import NodeError
from nodeloom.files import file_target, is_ref, open_content, open_file, parent_dir
from nodeloom.nodes.integration.write_file.definition import WRITE_MODES
from nodeloom.plugins.contract import BinaryStore, DataValue, ExecutionResult, FlowContext

CHUNK = 1024 * 1024
_OPEN = {
    "create": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "overwrite": os.O_WRONLY | os.O_CREAT | os.O_EXCL,  # the temporary file
    "append": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


class WriteFileExecutor:
    node_type = "write-file"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        target = file_target(data, "Write File", "mode", WRITE_MODES, "create")
        path, parts, mode = target.path, target.parts, target.choice
        content = data.get("content")
        if content is None and "input" in inputs:
            content = inputs["input"].value
        source = _source(content, mode)
        blobs = context.services.blobs
        size = await asyncio.to_thread(write, parts, path, mode, source, blobs)
        return ExecutionResult({"output": {"path": "/".join(parts), "size": size}})


def _source(content: Any, mode: str) -> Any:
    """The bytes to write, or the reference (`file:` or `blob:`) whose content to copy."""
    if is_ref(content):
        return content
    if content is None:
        raise NodeError(
            "Write File has nothing to write: set `content`, or wire a value into `input`.",
            code="invalid_parameter",
            retryable=False,
            details={"field": "content"},
        )
    if isinstance(content, str):
        return content.encode("utf-8")
    try:
        if mode == "append":
            text = json.dumps(content, ensure_ascii=False, separators=(",", ":")) + "\n"
        else:
            text = json.dumps(content, ensure_ascii=False, indent=2) + "\n"
    except (TypeError, ValueError) as exc:
        raise NodeError(
            f"Write File cannot write this content as JSON: {exc}.",
            code="invalid_parameter",
            retryable=False,
            details={"field": "content"},
        ) from None
    return text.encode("utf-8")


def write(
    parts: list[str], path: str, mode: str, source: Any, blobs: BinaryStore | None = None
) -> int:
    """Write and return the file's size afterwards."""
    opened = None if isinstance(source, bytes) else open_content(source, blobs, "content")
    with (
        opened or contextlib.nullcontext() as origin,
        parent_dir(parts, path, create=True) as parent,
    ):
        name = parts[-1]
        target = f".{name}.{secrets.token_hex(6)}.tmp" if mode == "overwrite" else name
        try:
            fd = open_file(parent, target, _OPEN[mode], path)
        except FileExistsError:
            raise NodeError(
                f"{path!r} already exists; mode create never replaces a file. Use mode "
                "overwrite to replace it or append to add to it.",
                code="file_exists",
                retryable=False,
                details={"field": "mode", "path": path},
            ) from None
        try:
            with os.fdopen(fd, "wb") as file:
                if origin is None:
                    file.write(source)
                else:
                    _copy(origin, file)
                file.flush()
                size = os.fstat(file.fileno()).st_size
            if mode == "overwrite":
                os.replace(target, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            if mode == "overwrite":
                _unlink(parent, target)
            raise
    return size


def _copy(origin: BinaryIO, file: Any) -> None:
    """The content of a reference, a chunk at a time."""
    left = os.fstat(origin.fileno()).st_size  # a file appended to itself ends here
    while left > 0 and (chunk := origin.read(min(CHUNK, left))):
        file.write(chunk)
        left -= len(chunk)


def _unlink(parent: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=parent)


executor = WriteFileExecutor()
