"""Filter: matching items on `pass`, the rest on `reject`; an empty side does not fire."""

from __future__ import annotations

from typing import Any

from nodeloom.conditions import evaluate_condition, json_type, preview
from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class FilterExecutor:
    node_type = "filter"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        items = inputs["input"].value
        if not isinstance(items, list):
            raise NodeError(
                f"Filter needs a list on its `input` port; received {json_type(items)} "
                f"{preview(items)}. A single item is not treated as a list of one: wrap it "
                f"in a list first (for example with JSON Transform `[$]`).",
                code="invalid_input",
                retryable=False,
                details={"port": "input", "received_type": json_type(items)},
            )
        passed: list[Any] = []
        rejected: list[Any] = []
        for index, item in enumerate(items):
            (passed if _matches(index, data, item) else rejected).append(item)
        outputs: dict[str, Any] = {}
        if passed:
            outputs["pass"] = passed
        if rejected:
            outputs["reject"] = rejected
        return ExecutionResult(outputs=outputs)


def _matches(index: int, data: dict[str, Any], item: Any) -> bool:
    try:
        return evaluate_condition(data, item)
    except NodeError as error:
        raise NodeError(
            f"Filter item {index}: {error}",
            code=error.code,
            retryable=error.retryable,
            details={**error.details, "item": index},
        ) from error


executor = FilterExecutor()
