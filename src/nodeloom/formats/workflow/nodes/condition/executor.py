import json
from collections.abc import AsyncIterator
from typing import Any

from nodeloom.formats.workflow.log import log_event
from nodeloom.plugins.contract import DataValue, Event, ExecutionResult, FlowContext


class WorkflowIfExecutor:
    node_type = "workflow-if"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        value = inputs["input"].value if "input" in inputs else ""
        yield log_event("step_start", "condition node")
        text = as_text(value).lower()
        for index, condition in enumerate(data.get("conditions") or []):
            operator = condition.get("operator") or "equal"
            expected = condition.get("value") or ""
            holds = matches(text, operator, expected)
            yield log_event(
                "logic_check",
                f'Condition {index + 1} ({operator} "{expected}") evaluated as '
                f"{'true' if holds else 'false'}",
                condition=index,
                result=holds,
            )
            if holds:
                yield ExecutionResult({f"condition-{index}": value})
                return
        yield ExecutionResult({"false": value})


def as_text(value: Any) -> str:
    """The previous output as text: a string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def matches(text: str, operator: str, expected: str) -> bool:
    """Whether a condition holds for lower-cased `text`. The value is trimmed and
    lower-cased; an empty value never holds."""
    wanted = expected.strip().lower()
    if not wanted:
        return False
    return wanted in text if operator == "contains" else text == wanted


executor = WorkflowIfExecutor()
