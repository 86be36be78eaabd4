from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest
from nodeloom.plugins.deadlines import timed_out, wake_at


class ApprovalExecutor:
    node_type = "approval"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        value = inputs["input"].value if "input" in inputs else None
        request = InputRequest(
            "approval", data.get("prompt") or "Approve?", value=value, wake_at=wake_at(data)
        )
        try:
            answer = await context.wait_for_input(request)
        except TimeoutError:
            on_timeout = data.get("on_timeout") or "fail"
            if on_timeout == "port":
                return ExecutionResult({"timeout": value})
            if on_timeout != "answer":
                error = timed_out("Approval", context.node_name, context.node_id, data["timeout"])
                raise error from None
            decision = "approve" if data.get("timeout_answer") == "approve" else "reject"
            answer = {"decision": decision, "note": "no answer in time", "timed_out": True}
        return ExecutionResult({"decision": answer, answer["decision"]: value})


executor = ApprovalExecutor()
