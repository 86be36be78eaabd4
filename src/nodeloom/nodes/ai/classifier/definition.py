from collections.abc import Mapping
from typing import Any

from nodeloom.models.parameters import MODEL_PARAMETERS
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

RESERVED = ("category", "error")


def category_names(categories: Any) -> list[str]:
    names = []
    for item in categories if isinstance(categories, list) else []:
        names.append(item.get("name") if isinstance(item, dict) else item)
    return names


def _check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    categories = data.get("categories")
    if isinstance(categories, str):
        return []
    if not isinstance(categories, list) or len(categories) < 2:
        return [
            (
                "categories",
                'give at least two categories: ["billing", "support"] or '
                '[{"name": "billing", "description": "..."}]',
            )
        ]
    problems = []
    seen: set[str] = set()
    for index, name in enumerate(category_names(categories)):
        where = f"categories[{index}]"
        if not isinstance(name, str) or not name.strip():
            problems.append((where, "a category needs a non-empty name"))
        elif name in RESERVED:
            problems.append((where, f"'{name}' is reserved (it is a port of the node)"))
        elif name in seen:
            problems.append((where, f"the category '{name}' is listed twice"))
        else:
            seen.add(name)
    return problems


definition = NodeDefinition(
    id="classifier",
    name="Classifier",
    category="ai",
    description="Asks an LLM which of N named categories its input belongs to, and routes "
    "the input to that category's port.",
    icon="Tags",
    execution_mode="hybrid",
    inputs=(Port("input"),),
    outputs=(
        Port("category", description='{"category", "reason"}: always fires'),
        Port("{name}", repeat="categories", description="the input, when it is in this category"),
    ),
    main_output="category",
    parameters=(
        Parameter(
            "categories",
            "json",
            "Categories",
            required=True,
            description='["billing", "support"] or [{"name", "description"}]',
        ),
        Parameter(
            "prompt",
            "text",
            "Text",
            hybrid=True,
            socket="string",
            description="What to classify; default: the spine input as text",
        ),
        Parameter(
            "instructions",
            "text",
            "Instructions",
            description="Extra guidance for the classification",
        ),
        *MODEL_PARAMETERS,
    ),
    side_effects="idempotent",
    check=_check,
)
