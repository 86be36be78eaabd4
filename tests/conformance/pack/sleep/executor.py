import asyncio

from nodeloom.plugins.contract import ExecutionResult


class Sleep:
    """Awaits `seconds`, then outputs `value` (default: its input). Records cancellations."""

    node_type = "sleep"

    async def execute(self, data, inputs, context):
        try:
            await asyncio.sleep(data["seconds"])
        except asyncio.CancelledError:
            context.state.setdefault("cancelled", []).append(context.node_id)
            raise
        value = data.get("value")
        if value is None and "input" in inputs:
            value = inputs["input"].value
        return ExecutionResult({"output": value})


executor = Sleep()
