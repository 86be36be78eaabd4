from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest
from nodeloom.plugins.deadlines import timed_out, wake_at


class HumanInputExecutor:
    node_type = "human-input"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        fields = tuple(data.get("fields") or ())
        value = inputs["input"].value if "input" in inputs else None
        request = InputRequest(
            "input",
            data.get("prompt") or "Your input?",
            fields=fields,
            value=value,
            wake_at=wake_at(data),
        )
        try:
            answer = await context.wait_for_input(request)
        except TimeoutError:
            on_timeout = data.get("on_timeout") or "fail"
            if on_timeout == "port":
                return ExecutionResult({"timeout": value})
            if on_timeout != "answer":
                name, node_id = context.node_name, context.node_id
                error = timed_out("Human Input", name, node_id, data["timeout"])
                raise error from None
            answer = data.get("timeout_answer")
            answer = "" if answer is None else answer
        return ExecutionResult({"output": answer if fields else {"text": answer}})


executor = HumanInputExecutor()
