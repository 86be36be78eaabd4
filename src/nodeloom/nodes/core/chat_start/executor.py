from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class ChatStartExecutor:
    node_type = "chat-start"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        trigger = context.trigger if isinstance(context.trigger, dict) else {}
        return ExecutionResult({"output": {"message": trigger.get("message", "")}})


executor = ChatStartExecutor()
