import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from nodeloom.formats.workflow.log import log_event
from nodeloom.plugins.contract import DataValue, Event, ExecutionResult, FlowContext


class WorkflowStartExecutor:
    node_type = "workflow-start"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        yield log_event("step_start", "start node")
        yield ExecutionResult({"output": start_text(context.trigger, data.get("initial_input"))})


def start_text(trigger: Any, initial_input: Any) -> str:
    """The run's message when it has one (JSON for a non-text message), else the initial
    input, else empty text."""
    message = trigger.get("message") if isinstance(trigger, Mapping) else None
    if isinstance(message, str) and message:
        return message
    if message not in (None, ""):
        return json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return initial_input if isinstance(initial_input, str) else ""


executor = WorkflowStartExecutor()
