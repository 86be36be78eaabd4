"""Text Split: split text by a separator or into fixed-size character chunks."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    if data.get("mode", "separator") != "chunks":
        if data.get("separator") == "":
            return [("separator", "The separator must not be empty.")]
        return []
    size, overlap = data.get("chunk_size", 1000), data.get("chunk_overlap", 0)
    if _is_int(size) and _is_int(overlap) and size >= 1 and overlap >= size:
        return [
            (
                "chunk_overlap",
                f"chunk_overlap ({overlap}) must be smaller than chunk_size ({size}).",
            )
        ]
    return []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


definition = NodeDefinition(
    id="text-split",
    name="Text Split",
    category="data",
    description="Splits text into a list of parts: at every separator, or into chunks of "
    "chunk_size characters that overlap by chunk_overlap.",
    icon="Scissors",
    inputs=(Port("input", description="A string, or an object with a string `text`."),),
    outputs=(Port("output", description="The list of parts (strings)."),),
    parameters=(
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="separator",
            options=("separator", "chunks"),
            description="separator: split at every separator; chunks: fixed-size chunks.",
        ),
        Parameter(
            "separator",
            "string",
            "Separator",
            default="\n",
            description="Text to split at (mode separator), taken literally; default a newline.",
        ),
        Parameter(
            "chunk_size",
            "integer",
            "Chunk size",
            default=1000,
            minimum=1,
            description="Characters per chunk (mode chunks).",
        ),
        Parameter(
            "chunk_overlap",
            "integer",
            "Chunk overlap",
            default=0,
            minimum=0,
            description="Characters each chunk shares with the previous one (mode chunks); "
            "smaller than chunk_size.",
        ),
        Parameter(
            "keep_empty",
            "boolean",
            "Keep empty parts",
            default=False,
            description="Mode separator: keep empty parts (e.g. between two separators).",
        ),
    ),
    side_effects="pure",
    check=check,
)
