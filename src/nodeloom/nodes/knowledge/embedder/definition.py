"""Embedder: chunks -> chunks with an `embedding`, batched, cached by content hash."""

from nodeloom.knowledge.parameters import BASE_URL, MODEL, check_model
from nodeloom.plugins import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="embedder",
    name="Embedder",
    category="knowledge",
    description="Embeds chunks with a model (local:all-minilm-l6-v2 by default, offline), in "
    "batches with progress; text embedded before by the same model comes from the cache.",
    icon="Binary",
    inputs=(Port("input", description="Chunks [{id, text, metadata}] or strings."),),
    outputs=(
        Port(
            "output",
            label="Embedded",
            description="{model, dimension, chunks: [{id, text, metadata, embedding}]}",
        ),
    ),
    parameters=(
        MODEL,
        BASE_URL,
        Parameter("batch_size", "integer", "Batch size", default=32, minimum=1, maximum=2048),
    ),
    side_effects="idempotent",
    check=check_model,
)
