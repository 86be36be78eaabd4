"""Knowledge Base: a search tool over a collection for an Agent (agentic RAG)."""

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
    return check_collection(data) + check_model(data)


definition = NodeDefinition(
    id="knowledge-base",
    name="Knowledge Base",
    category="knowledge",
    description="Gives an Agent a tool that searches a collection. Wire `tools` into an "
    "Agent's `tools`; the agent decides when to search, and its output lists the hits it "
    "was given (`sources`).",
    icon="Library",
    execution_mode="structural",
    inputs=(),
    outputs=(
        Port("tools", socket="tools", label="Tools", description="Wire into an Agent's `tools`."),
    ),
    parameters=(
        COLLECTION,
        Parameter(
            "description",
            "text",
            "Description",
            description="What the collection holds, told to the model so it knows when to "
            "search (e.g. 'the product manuals').",
        ),
        Parameter("top_k", "integer", "Top k", default=5, minimum=1, maximum=50),
        Parameter("mode", "enum", "Mode", default="hybrid", options=SEARCH_MODES),
        SEARCH_MODEL,
        BASE_URL,
    ),
    side_effects="pure",
    check=check,
)
