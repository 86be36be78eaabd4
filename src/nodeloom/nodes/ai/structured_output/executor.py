from typing import Any

from nodeloom.errors import NodeError
from nodeloom.models.llm import (
    build_messages,
    check_parameters,
    complete_json,
    prompt_from,
    spec_from_parameters,
)
from nodeloom.plugins.contract import BuildContext, DataValue, ExecutionResult, FlowContext

DEFAULT_SYSTEM = "Extract the requested information. Answer with JSON only."


class StructuredOutputExecutor:
    node_type = "structured-output"

    def build(self, data: dict[str, Any], context: BuildContext) -> None:
        check_parameters(data, context.deferred, where=f"'{context.node_name}'")

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        where = f"'{context.node_name}'"
        schema = data.get("schema")
        if not isinstance(schema, dict):
            raise NodeError(
                "`schema` must be a JSON Schema object", code="invalid_parameter", retryable=False
            )
        prompt = prompt_from(data, inputs)
        value, usage = await complete_json(
            spec_from_parameters(data, where=where),
            build_messages(data.get("system") or DEFAULT_SYSTEM, prompt),
            schema,
            name=data.get("schema_name") or "output",
            where=where,
            http_client=context.http_client(),
        )
        return ExecutionResult({"output": value}, usage=usage)


executor = StructuredOutputExecutor()
