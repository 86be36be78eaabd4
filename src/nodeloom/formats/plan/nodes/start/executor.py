"""plan-start: creates the threads in `state["plan"]`, `main` holding the task."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.plan.threads import PlanState
from nodeloom.models.llm import input_text
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class PlanStartExecutor:
    """The task is the run's message (`--input`), else the pattern's `task`."""

    node_type = "plan-start"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        trigger = context.trigger if isinstance(context.trigger, dict) else {}
        task = input_text(trigger.get("message")) or (data.get("task") or "")
        if not task.strip():
            raise NodeError(
                "the plan has no task: give the run a message (nodeloom run plan.json --input "
                "'the task'), or give the pattern a 'task'",
                code="missing_task",
                retryable=False,
            )
        PlanState.begin(context.state, task)
        return ExecutionResult({"output": {"task": task}})


executor = PlanStartExecutor()
