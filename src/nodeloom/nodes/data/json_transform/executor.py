"""JSON Transform: evaluate a JSONata expression (jsonata-python) against the input.

Compiled expressions are cached (bounded) per distinct expression text. jsonata-python
keeps a per-thread "current expression" that `$now()`, `$millis()` and higher-order
functions read, and that constructing any expression overwrites; a cached expression is
therefore made current again before each evaluation (in the worker thread that evaluates
it: see bounds.py for why evaluation is off the event loop and how it is stopped).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any

from jsonata import Jsonata

from nodeloom.conditions import preview
from nodeloom.errors import NodeError
from nodeloom.nodes.data.json_transform.bounds import WORKERS, Guard, re2_engine
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

CACHE_SIZE = 256


class JsonTransformExecutor:
    node_type = "json-transform"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        expression = data.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise NodeError(
                "JSON Transform needs a JSONata `expression` (for example `$` to pass the "
                f"input through); received {preview(expression)}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "expression"},
            )
        value = inputs["input"].value if "input" in inputs else None
        return ExecutionResult(outputs={"output": await transform(expression, value)})


async def transform(expression: str, value: Any, guard: Guard | None = None) -> Any:
    """Evaluate `expression` against `value` in a worker thread; raises NodeError
    (jsonata_error). Cancelling the caller stops the evaluation at its next step."""
    guard = guard or Guard()
    compiled = _compile(expression)
    try:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(WORKERS, _evaluate, compiled, expression, value, guard)
    except asyncio.CancelledError:
        guard.cancelled.set()
        raise


def _evaluate(compiled: Jsonata, expression: str, value: Any, guard: Guard) -> Any:
    try:
        Jsonata.CURRENT.jsonata = compiled
        result = compiled.evaluate(value, guard.bindings())
    except Exception as error:  # jsonata raises JException and, on odd input, plain errors
        raise _jsonata_error(expression, error) from error
    finally:
        guard.finished.set()
    return _plain(result, expression)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile(expression: str) -> Jsonata:
    try:
        return Jsonata(expression, regex_engine=re2_engine)
    except Exception as error:
        raise _jsonata_error(expression, error) from error


def _jsonata_error(expression: str, error: Exception) -> NodeError:
    code = getattr(error, "error", None)
    reason = (str(error) or type(error).__name__).rstrip(".")
    return NodeError(
        f"JSONata expression failed: {reason}"
        + (f" ({code})" if code else "")
        + f". Expression: {preview(expression, 200)}",
        code="jsonata_error",
        retryable=False,
        details={"field": "expression", "expression": expression, "jsonata_code": code},
    )


def _plain(value: Any, expression: str) -> Any:
    """The result as plain JSON (jsonata returns list subclasses, and may return functions)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list):
        return [_plain(item, expression) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _plain(item, expression) for key, item in value.items()}
    raise NodeError(
        f"JSONata expression produced a {type(value).__name__}, not JSON (did it return a "
        f"function instead of calling it?). Expression: {preview(expression, 200)}",
        code="jsonata_error",
        retryable=False,
        details={"field": "expression", "expression": expression},
    )


executor = JsonTransformExecutor()
