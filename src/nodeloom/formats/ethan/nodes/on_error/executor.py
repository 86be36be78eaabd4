"""Ethan On Error: route a failed node's error (the engine's error object)."""

from __future__ import annotations

from typing import Any

from nodeloom.formats.ethan import frames, runtime
from nodeloom.formats.ethan.frames import GraphTimeout
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class EthanOnErrorExecutor:
    node_type = "ethan-on-error"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        error = inputs["input"].value if "input" in inputs else None
        error = error if isinstance(error, dict) else {"message": str(error)}
        if error.get("code") == "graph_timeout":  # the graph is out of time: no way on
            raise GraphTimeout(str(error.get("cause") or error.get("message")))
        frame = frames.find(context)
        result = {"error": error}
        try:
            routes = list(enumerate(spec.get("routes") or []))
            taken = [i for i, route in routes if route["kind"] == "error_to"]
            others = [(i, route) for i, route in routes if route["kind"] != "error_to"]
            if others:
                taken += runtime.chosen(spec, others, frame, result)
            runtime.publish(context, frame)
            return ExecutionResult({"result": result, **runtime.fire(spec, sorted(taken))})
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


executor = EthanOnErrorExecutor()
