"""plan-finish: sets the run's result {content, threads, data_out, tokens_usage}."""

from __future__ import annotations

from typing import Any

from nodeloom.formats.plan.threads import STATE_KEY, PlanState
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class PlanFinishExecutor:
    """Moves the plan's threads out of the run's state into its result."""

    node_type = "plan-finish"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        result = PlanState.of(context.state).result()
        context.set_result(result)
        context.state.pop(STATE_KEY, None)
        return ExecutionResult({"output": {"content": result["content"]}})


executor = PlanFinishExecutor()
