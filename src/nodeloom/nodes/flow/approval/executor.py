from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest


class ApprovalExecutor:
    node_type = "approval"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        value = inputs["input"].value if "input" in inputs else None
        answer = await context.wait_for_input(
            InputRequest("approval", data.get("prompt") or "Approve?", value=value)
        )
        return ExecutionResult({"decision": answer, answer["decision"]: value})


executor = ApprovalExecutor()
