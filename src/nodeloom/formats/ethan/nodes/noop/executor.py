"""Ethan Noop: map, then routes; its result is `{}`."""

from __future__ import annotations

from typing import Any

from nodeloom.formats.ethan import frames, runtime
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class EthanNoopExecutor:
    node_type = "ethan-noop"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        frame = frames.find(context)
        try:
            runtime.on_time(frame, spec)
            return runtime.finish(spec, frame, context, {})
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


executor = EthanNoopExecutor()
