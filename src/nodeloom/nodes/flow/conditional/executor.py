"""Conditional: the input goes to `true` or `false`; the port that did not fire is dead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.conditions import evaluate_condition
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class ConditionalExecutor:
    node_type = "conditional"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: which port fired."""
        fired = [port for port in outputs if port != "error"]
        return f"→ {', '.join(fired)}" if fired else None

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        incoming = inputs["input"]
        port = "true" if evaluate_condition(data, incoming.value) else "false"
        return ExecutionResult(outputs={port: incoming})


executor = ConditionalExecutor()
