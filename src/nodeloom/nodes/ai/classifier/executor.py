from typing import Any

from nodeloom.models.llm import (
    build_messages,
    check_parameters,
    complete_json,
    prompt_from,
    spec_from_parameters,
)
from nodeloom.nodes.ai.classifier.definition import category_names
from nodeloom.plugins.contract import BuildContext, DataValue, ExecutionResult, FlowContext


def _system(categories: list[Any], instructions: str | None) -> str:
    lines = ["Classify the user's text into exactly one of these categories:"]
    for item in categories:
        if isinstance(item, dict):
            description = item.get("description")
            lines.append(f"- {item['name']}" + (f": {description}" if description else ""))
        else:
            lines.append(f"- {item}")
    if instructions:
        lines.append(instructions)
    lines.append('Answer with JSON: {"category": <one of the names>, "reason": <one sentence>}.')
    return "\n".join(lines)


class ClassifierExecutor:
    node_type = "classifier"

    def build(self, data: dict[str, Any], context: BuildContext) -> None:
        check_parameters(data, context.deferred, where=f"'{context.node_name}'")

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        where = f"'{context.node_name}'"
        categories = data.get("categories") or []
        names = category_names(categories)
        value = inputs["input"].value if "input" in inputs else None
        text = prompt_from(data, inputs, what="nothing to classify")
        schema = {
            "type": "object",
            "properties": {
                "category": {"type": "string", "enum": names},
                "reason": {"type": "string"},
            },
            "required": ["category", "reason"],
        }
        answer, usage = await complete_json(
            spec_from_parameters(data, where=where),
            build_messages(_system(categories, data.get("instructions")), text),
            schema,
            name="classification",
            where=where,
            http_client=context.http_client(),
        )
        category = answer["category"]
        return ExecutionResult(
            {
                "category": {"category": category, "reason": answer.get("reason", "")},
                category: value,
            },
            usage=usage,
        )


executor = ClassifierExecutor()
