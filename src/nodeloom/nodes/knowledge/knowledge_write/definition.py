"""Knowledge Write: upsert chunks into a named collection; report what changed."""

from collections.abc import Mapping
from typing import Any

from nodeloom.knowledge.parameters import BASE_URL, COLLECTION, MODEL, check_collection, check_model
from nodeloom.plugins import NodeDefinition, Parameter, Port


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    return check_collection(data) + check_model(data)


definition = NodeDefinition(
    id="knowledge-write",
    name="Knowledge Write",
    category="knowledge",
    description="Writes chunks into a collection (created on first write with the model that "
    "embedded them), deduplicated by content hash. Output: counts added/updated/unchanged/"
    "removed.",
    icon="DatabaseZap",
    inputs=(
        Port(
            "input",
            description="An Embedder's output, or chunks [{id, text, metadata}] (embedded "
            "here with `model`).",
        ),
    ),
    outputs=(
        Port(
            "output",
            description="{collection, added, updated, unchanged, removed, chunks}",
        ),
    ),
    parameters=(
        COLLECTION,
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="upsert",
            options=("upsert", "replace_source", "append"),
            description="upsert: add new ids, update changed ones; replace_source: also drop "
            "what the written sources had before; append: add only content not stored yet.",
        ),
        MODEL,
        BASE_URL,
    ),
    side_effects="idempotent",
    check=check,
)
