import asyncio
from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class SleepExecutor:
    """Awaits `seconds` (a stand-in for a model or HTTP call), then outputs its input."""

    node_type = "sleep"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        await asyncio.sleep(data["seconds"])
        given = inputs.get("input")
        return ExecutionResult({"output": given.value if given is not None else None})


executor = SleepExecutor()
