from collections.abc import Mapping
from typing import Any

from nodeloom.models.parameters import MODEL_PARAMETERS
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def _check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    schema = data.get("schema")
    if schema is None or isinstance(schema, str):
        return []
    if not isinstance(schema, dict) or schema.get("type") not in (None, "object"):
        return [
            (
                "schema",
                'the schema is a JSON Schema object, e.g. {"type": "object", '
                '"properties": {...}, "required": [...]}',
            )
        ]
    return []


definition = NodeDefinition(
    id="structured-output",
    name="Structured Output",
    category="ai",
    description="An LLM call whose reply must be a JSON object valid against a JSON Schema; "
    "outputs that object. A reply that does not validate fails the node (retryable).",
    icon="Braces",
    execution_mode="hybrid",
    inputs=(Port("input", required=False),),
    outputs=(Port("output", description="the object, valid against the schema"),),
    parameters=(
        Parameter("schema", "json", "JSON Schema", required=True),
        Parameter(
            "prompt",
            "text",
            "Prompt",
            hybrid=True,
            socket="string",
            description="Default: the spine input as text",
        ),
        Parameter("system", "text", "System", hybrid=True, socket="string"),
        Parameter("schema_name", "string", "Schema name", default="output"),
        *MODEL_PARAMETERS,
    ),
    side_effects="idempotent",
    check=_check,
)
