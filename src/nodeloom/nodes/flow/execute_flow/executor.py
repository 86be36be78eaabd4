"""Execute Flow: ask the run's FlowRunner (Services.flows) for a child run and wait for it.
The child's node events are not this node's: they are recorded in the child's run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, FlowRunner


class ExecuteFlowExecutor:
    node_type = "execute-flow"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: which flow ran."""
        flow = parameters.get("flow")
        return f"ran flow '{flow}'" if isinstance(flow, str) else None

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        runner = flow_runner(context)
        child = await runner.run_child(
            str(data.get("flow") or ""),
            trigger=child_trigger(data.get("input"), inputs.get("input")),
            parent_run_id=context.run_id,
            parent_node=context.node_id,
            version=data.get("version"),
            max_depth=int(data.get("max_depth") or 10),
        )
        if not child.ok:
            error = dict(child.error or {})
            raise NodeError(
                f"flow '{child.flow.name}' (version {child.flow.version}) ended "
                f"{child.status} in run {child.run_id}: {error.get('message', 'no error given')}",
                code="subflow_failed",
                retryable=False,
                details={"child_run_id": child.run_id, "child_error": error},
            )
        return ExecutionResult({"output": child.result})


def flow_runner(context: FlowContext) -> FlowRunner:
    """The run's FlowRunner; a NodeError if the run is not recorded."""
    runner = context.services.flows
    if runner is None:
        raise NodeError(
            f"'{context.node_name}' ({context.node_id}) runs a saved flow, which needs a "
            "recorded run: run the flow with `nodeloom serve` or `nodeloom run` "
            "(a run store), not with Flow.run()",
            code="subflows_unavailable",
            retryable=False,
        )
    return runner


def child_trigger(parameter: Any, wired: DataValue | None) -> dict[str, Any]:
    """The child's trigger: the `input` parameter, else the wired value; an object as is,
    anything else as {"message": value}."""
    value = parameter if parameter not in (None, "", {}) else None
    if value is None and wired is not None:
        value = wired.value
    if isinstance(value, Mapping):
        return dict(value)
    return {} if value is None else {"message": value}


executor = ExecuteFlowExecutor()
