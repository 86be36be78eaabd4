from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class ScheduleTriggerExecutor:
    node_type = "schedule-trigger"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        trigger = context.trigger if isinstance(context.trigger, dict) else {}
        return ExecutionResult(
            {
                "output": {
                    "scheduled_at": trigger.get("scheduled_at"),
                    "fired_at": trigger.get("fired_at"),
                }
            }
        )


executor = ScheduleTriggerExecutor()
