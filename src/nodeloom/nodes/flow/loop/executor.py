import asyncio
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.nodes.flow.loop.definition import MAX_CONCURRENCY
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
        concurrency = _concurrency(data.get("concurrency"))
        if concurrency > 1 and len(items) > 1:
            async for event in _concurrently(items, concurrency, context):
                yield event
            return
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


async def _concurrently(items: list[Any], concurrency: int, context: FlowContext):
    """forEach with up to `concurrency` bodies at once; results in item order. The first
    iteration to fail cancels the others and fails the Loop. Progress counts iterations
    finished, in the order they finish."""
    total = len(items)
    slots = asyncio.Semaphore(concurrency)

    async def iteration(index: int, item: Any) -> tuple[int, Any]:
        async with slots:
            loop = {"index": index, "item": item, "total": total, "concurrency": concurrency}
            return index, await context.run_body("body", item, loop)

    tasks = [asyncio.ensure_future(iteration(i, item)) for i, item in enumerate(items)]
    results: list[Any] = [None] * total
    try:
        for finished, next_done in enumerate(asyncio.as_completed(tasks), 1):
            index, result = await next_done
            results[index] = result
            yield Event("progress", {"iteration": finished, "of": total})
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    yield ExecutionResult({"output": results})


def _concurrency(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise NodeError(
            f"concurrency must be an integer from 1 to {MAX_CONCURRENCY}; got {value!r}",
            code="invalid_parameter",
            retryable=False,
            details={"field": "concurrency"},
        )
    return value


executor = LoopExecutor()
