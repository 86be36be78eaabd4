from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest


class HumanInputExecutor:
    node_type = "human-input"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        fields = tuple(data.get("fields") or ())
        request = InputRequest(
            "input",
            data.get("prompt") or "Your input?",
            fields=fields,
            value=inputs["input"].value if "input" in inputs else None,
        )
        answer = await context.wait_for_input(request)
        return ExecutionResult({"output": answer if fields else {"text": answer}})


executor = HumanInputExecutor()
