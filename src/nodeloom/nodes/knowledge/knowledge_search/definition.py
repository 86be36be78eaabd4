"""Knowledge Search: a query -> the best chunks of a collection and a prompt context."""

from collections.abc import Mapping
from typing import Any

from nodeloom.knowledge.parameters import (
    BASE_URL,
    COLLECTION,
    SEARCH_MODEL,
    SEARCH_MODES,
    check_collection,
    check_model,
)
from nodeloom.plugins import NodeDefinition, Parameter, Port


def check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues = check_collection(data) + check_model(data)
    where = data.get("filter")
    if (
        where is not None
        and not isinstance(where, dict)
        and not (isinstance(where, str) and "{{" in where)
    ):
        issues.append(
            ("filter", 'the filter is an object of metadata fields, e.g. {"source": "faq.md"}')
        )
    return issues


definition = NodeDefinition(
    id="knowledge-search",
    name="Knowledge Search",
    category="knowledge",
    description="Finds the chunks of a collection that answer a query: by vector, keyword, or "
    "both fused (hybrid, the default). Output {hits, context}: context joins the hits with "
    "[n] citation markers for a prompt.",
    icon="Search",
    inputs=(
        Port(
            "input",
            required=False,
            description="The spine input; its text (message, text, query) is the default query.",
        ),
    ),
    outputs=(
        Port(
            "output",
            description='{"hits": [{text, score, metadata, id}], "context": "[1] ... [2] ..."}',
        ),
    ),
    parameters=(
        COLLECTION,
        Parameter(
            "query",
            "text",
            "Query",
            hybrid=True,
            description="What to search for. Default: the input's text.",
            placeholder="{{ $json.message }}",
        ),
        Parameter("top_k", "integer", "Top k", default=5, minimum=1, maximum=100),
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="hybrid",
            options=SEARCH_MODES,
            description="hybrid: reciprocal rank fusion of vector and keyword results.",
        ),
        Parameter(
            "filter",
            "json",
            "Metadata filter",
            description='Only chunks whose metadata has these values, e.g. {"source": "faq.md"}.',
        ),
        SEARCH_MODEL,
        BASE_URL,
    ),
    side_effects="pure",
    check=check,
    output_shape={
        "hits": [{"text": "string", "score": 0.0, "metadata": {}, "id": "string"}],
        "context": "string",
    },
)
