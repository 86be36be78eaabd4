"""Text Chunker: documents -> chunks sized in tokens of the embedding model."""

from collections.abc import Mapping
from typing import Any

from nodeloom.knowledge.parameters import MODEL, check_model
from nodeloom.plugins import NodeDefinition, Parameter, Port


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues = check_model(data)
    size, overlap = data.get("chunk_size", 256), data.get("chunk_overlap", 32)
    if isinstance(size, int) and isinstance(overlap, int) and overlap >= size:
        issues.append(
            ("chunk_overlap", f"chunk_overlap ({overlap}) must be smaller than chunk_size ({size})")
        )
    return issues


definition = NodeDefinition(
    id="text-chunker",
    name="Text Chunker",
    category="knowledge",
    description="Splits documents into chunks of chunk_size tokens (of the embedding model's "
    "tokenizer, or characters) overlapping by chunk_overlap; each chunk keeps its source, "
    "position and heading path.",
    icon="Scissors",
    inputs=(Port("input", description="Documents [{id, text, metadata}], one document, or text."),),
    outputs=(Port("output", label="Chunks", description="[{id, text, metadata}]"),),
    parameters=(
        Parameter(
            "strategy",
            "enum",
            "Strategy",
            default="recursive",
            options=("recursive", "markdown", "sentence"),
            description="recursive: paragraphs, then lines, sentences, words; markdown: never "
            "across a heading; sentence: whole sentences.",
        ),
        Parameter("chunk_size", "integer", "Chunk size", default=256, minimum=1),
        Parameter("chunk_overlap", "integer", "Chunk overlap", default=32, minimum=0),
        Parameter(
            "unit",
            "enum",
            "Measured in",
            default="tokens",
            options=("tokens", "characters"),
        ),
        MODEL,
    ),
    side_effects="pure",
    check=check,
)
