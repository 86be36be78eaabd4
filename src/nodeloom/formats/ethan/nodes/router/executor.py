"""Ethan Router: choose the routes; its result is `{"targets": [...]}`."""

from __future__ import annotations

from typing import Any

from nodeloom.formats.ethan import frames, runtime
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class EthanRouterExecutor:
    node_type = "ethan-router"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        frame = frames.find(context)
        try:
            runtime.on_time(frame, spec)
            routes = list(enumerate(spec.get("routes") or []))
            taken = runtime.chosen(spec, routes, frame, None)  # conditions see result: null
            targets = [routes[i][1]["to"] for i in taken]
            runtime.publish(context, frame)
            return ExecutionResult({"result": {"targets": targets}, **runtime.fire(spec, taken)})
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


executor = EthanRouterExecutor()
