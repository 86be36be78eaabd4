"""Switch: the input goes to matching `case-{index}` ports, or to `default`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.conditions import evaluate_condition, json_type
from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

MODES = ("first", "all")


class SwitchExecutor:
    node_type = "switch"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: which port fired."""
        fired = [port for port in outputs if port != "error"]
        return f"→ {', '.join(fired)}" if fired else None

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        incoming = inputs["input"]
        cases = _cases(data.get("cases"))
        mode = data.get("mode") or "first"
        if mode not in MODES:
            raise NodeError(
                f"Switch mode must be one of {', '.join(MODES)}; received {mode!r}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "mode"},
            )
        outputs: dict[str, Any] = {}
        for index, case in enumerate(cases):
            if _matches(index, case, incoming.value):
                outputs[f"case-{index}"] = incoming
                if mode == "first":
                    break
        if not outputs:
            outputs["default"] = incoming
        return ExecutionResult(outputs=outputs)


def _cases(cases: Any) -> list[Mapping[str, Any]]:
    if cases is None:
        return []
    if not isinstance(cases, list):
        raise NodeError(
            f"Switch cases must be a list of conditions {{field, operator, value}}; "
            f"received {json_type(cases)}.",
            code="condition_error",
            retryable=False,
            details={"field": "cases"},
        )
    for index, case in enumerate(cases):
        if not isinstance(case, Mapping):
            raise NodeError(
                f"Switch cases[{index}] must be a condition object {{field, operator, "
                f"value}}; received {json_type(case)}.",
                code="condition_error",
                retryable=False,
                details={"field": f"cases[{index}]"},
            )
    return cases


def _matches(index: int, case: Mapping[str, Any], value: Any) -> bool:
    try:
        return evaluate_condition(case, value)
    except NodeError as error:
        raise NodeError(
            f"Switch cases[{index}]: {error}",
            code=error.code,
            retryable=error.retryable,
            details={**error.details, "case": index},
        ) from error


executor = SwitchExecutor()
