"""plan-llm-first (and plan-tool-first, which shares the executor): one plan node each
(nodeloom.formats.plan.steps); built in phase 1, which checks the model and picks the
node's tools out of the Toolsets wired in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.plan.steps import Step, StepDone, run_step
from nodeloom.formats.plan.threads import PlanState
from nodeloom.formats.plan.toolbox import Toolbox, select_tools
from nodeloom.models.llm import check_parameters, spec_from_parameters
from nodeloom.models.resolve import create_model
from nodeloom.plugins.contract import (
    BuildContext,
    DataValue,
    Event,
    ExecutionResult,
    FlowContext,
    ToolsResult,
)


class PlanStepExecutor:
    """An llm-first or tool-first plan node."""

    def __init__(self, node_type: str) -> None:
        self.node_type = node_type
        self.kind = node_type.removeprefix("plan-")

    def build(self, data: dict[str, Any], context: BuildContext) -> ToolsResult | None:
        """Phase 1: a node that calls the model checks it is configured; the node's tools
        are taken from the Toolsets wired into it, so a missing one fails before any call."""
        where = f"'{context.node_name}'"
        if data.get("task_prompt") or "task_prompt" in context.deferred:
            check_parameters(data, context.deferred, where=where)
        for parameter in ("tools", "initial_tool_name"):
            if parameter in context.deferred:
                raise NodeError(
                    f"`{parameter}` depends on the flow, but tools are picked before the flow "
                    "runs: use a plain value",
                    code="invalid_parameter",
                    retryable=False,
                    details={"field": parameter},
                )
        step = Step.from_data(self.kind, data)
        return select_tools(context.tools, step.tool_names)

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        step = Step.from_data(self.kind, data)
        plan = PlanState.of(context.state)
        toolbox = Toolbox.of(context.structure, step.tools, step.tools_limit)

        def model() -> Any:
            where = f"'{context.node_name}'"
            spec = spec_from_parameters(data, where=where)
            return create_model(spec, where=where, http_client=context.http_client())

        async for item in run_step(step, plan, toolbox, model):
            if isinstance(item, StepDone):
                output = {"thread_id": step.thread_id, "content": item.content}
                yield ExecutionResult({"output": output}, usage=item.usage)
            else:
                yield item


executor = PlanStepExecutor("plan-llm-first")
