from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, Event, ExecutionResult, FlowContext


class LoopExecutor:
    node_type = "loop"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ):  # async generator: progress per iteration
        incoming = inputs["input"].value if "input" in inputs else None
        if data.get("mode") == "repeat":
            async for item in self._repeat(data, incoming, context):
                yield item
            return
        items = data.get("items")
        if items is None:
            items = incoming
        if not isinstance(items, list):
            kind = "nothing" if items is None else type(items).__name__
            raise NodeError(
                f"forEach needs a list to iterate, got {kind}; set 'items' (e.g. "
                "{{ $json.items }}) or wire a list into the input",
                code="loop_items",
                retryable=False,
            )
        results = []
        total = len(items)
        for index, item in enumerate(items):
            results.append(
                await context.run_body("body", item, {"index": index, "item": item, "total": total})
            )
            yield Event("progress", {"iteration": index + 1, "of": total})
        yield ExecutionResult({"output": results})

    async def _repeat(self, data: dict[str, Any], value: Any, context: FlowContext):
        until = data.get("until")
        limit = data.get("max_iterations") or 10
        results = []
        for index in range(limit):
            result = await context.run_body("body", value, {"index": index, "item": value})
            results.append(result)
            yield Event("progress", {"iteration": index + 1, "of": limit})
            if until and context.evaluate(
                until, {"$json": result, "$loop": {"index": index, "item": value, "result": result}}
            ):
                yield ExecutionResult({"output": results})
                return
            value = result
        if until and data.get("on_max_iterations") == "error":
            raise NodeError(
                f"'until' was still false after max_iterations ({limit}) iterations",
                code="loop_max_iterations",
                retryable=False,
            )
        yield ExecutionResult({"output": results})


executor = LoopExecutor()
