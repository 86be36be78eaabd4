"""Text Split: a string (or an object's `text`) becomes a list of parts on `output`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.conditions import json_type
from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

MODES = ("separator", "chunks")


class TextSplitExecutor:
    node_type = "text-split"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        text = _text(inputs["input"].value)
        mode = data.get("mode") or "separator"
        if mode == "separator":
            separator = data.get("separator")
            if separator is None:
                separator = "\n"
            if not isinstance(separator, str) or separator == "":
                raise _invalid(
                    "separator",
                    f"Text Split needs a non-empty separator; received {separator!r}. "
                    "To split into single characters use mode chunks with chunk_size 1.",
                )
            parts = text.split(separator)
            if not data.get("keep_empty", False):
                parts = [part for part in parts if part]
        elif mode == "chunks":
            size = _integer(data, "chunk_size", 1000, minimum=1)
            overlap = _integer(data, "chunk_overlap", 0, minimum=0)
            if overlap >= size:
                raise _invalid(
                    "chunk_overlap",
                    f"Text Split chunk_overlap ({overlap}) must be smaller than chunk_size "
                    f"({size}); otherwise the chunks would not advance.",
                )
            parts = chunk(text, size, overlap)
        else:
            raise _invalid(
                "mode", f"Text Split mode must be one of {', '.join(MODES)}; received {mode!r}."
            )
        return ExecutionResult(outputs={"output": parts})


def chunk(text: str, size: int, overlap: int) -> list[str]:
    """Chunks of `size` characters, each starting `size - overlap` after the previous.

    The last chunk ends at the end of the text; no chunk lies wholly inside the previous
    one. An empty text has no chunks.
    """
    parts: list[str] = []
    start = 0
    while start < len(text):
        parts.append(text[start : start + size])
        if start + size >= len(text):
            break
        start += size - overlap
    return parts


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return value["text"]
    received = json_type(value)
    if isinstance(value, Mapping):
        received = "an object without a string `text`"
    raise NodeError(
        f"Text Split needs a string, or an object with a string `text`, on its `input` port; "
        f"received {received}.",
        code="invalid_input",
        retryable=False,
        details={"port": "input", "received_type": json_type(value)},
    )


def _integer(data: dict[str, Any], name: str, default: int, *, minimum: int) -> int:
    value = data.get(name)
    if value is None:
        value = default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _invalid(
            name, f"Text Split {name} must be an integer >= {minimum}; received {value!r}."
        )
    return value


def _invalid(field: str, message: str) -> NodeError:
    return NodeError(message, code="invalid_parameter", retryable=False, details={"field": field})


executor = TextSplitExecutor()
