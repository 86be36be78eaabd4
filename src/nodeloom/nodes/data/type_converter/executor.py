"""Type Converter: explicit conversions the socket coercion table does not make."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any

from nodeloom.conditions import as_number, json_type, preview, resolve_path, split_path
from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext
from nodeloom.values import json_default

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})


class TypeConverterExecutor:
    node_type = "type-converter"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        to = data.get("to")
        if to not in CONVERTERS:
            raise NodeError(
                f"Type Converter `to` must be one of {', '.join(CONVERTERS)}; "
                f"received {preview(to)}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "to"},
            )
        value = inputs["input"].value
        field = data.get("field") or ""
        if not isinstance(field, str):
            raise NodeError(
                f"Type Converter `field` must be a dotted path such as 'user.age'; "
                f"received {preview(field)}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "field"},
            )
        return ExecutionResult(outputs={"output": convert_at(value, field, to)})


def convert_at(value: Any, field: str, to: str) -> Any:
    """`value` converted to `to`, or a copy of it with the field at `field` converted."""
    steps = split_path(field)
    if not steps:
        return _convert(value, to, field)
    result = copy.deepcopy(value)
    _, parent = resolve_path(result, ".".join(steps[:-1]))
    last = steps[-1]
    if isinstance(parent, dict) and last in parent:
        parent[last] = _convert(parent[last], to, field)
    elif isinstance(parent, list) and last.isascii() and last.isdigit() and int(last) < len(parent):
        parent[int(last)] = _convert(parent[int(last)], to, field)
    else:
        raise NodeError(
            f"Type Converter cannot convert field '{field}' to {to}: the field is not in "
            f"the input ({json_type(value)} {preview(value)}).",
            code="conversion_error",
            retryable=False,
            details={"field": field, "to": to},
        )
    return result


class _Impossible(Exception):
    """A conversion that cannot be made; the argument says why."""


def _convert(value: Any, to: str, field: str) -> Any:
    try:
        return CONVERTERS[to](value)
    except _Impossible as error:
        where = f" (field '{field}')" if field else ""
        raise NodeError(
            f"Cannot convert {preview(value)} ({json_type(value)}){where} to {to}: {error}.",
            code="conversion_error",
            retryable=False,
            details={"field": field or None, "to": to, "value": preview(value)},
        ) from None


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=json_default)


def to_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=json_default)


def to_number(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and not value.strip():
        raise _Impossible("the text is empty")
    number = as_number(value)
    if number is None:
        raise _Impossible("it is not a number (expected e.g. 42, -1.5 or 1e3)")
    if isinstance(number, float) and not math.isfinite(number):
        raise _Impossible("it is out of range")
    return number


def to_integer(value: Any) -> int:
    number = to_number(value)
    if isinstance(number, float):
        if not number.is_integer():
            raise _Impossible("it has a fractional part; round it first")
        return int(number)
    return number


def to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise _Impossible("expected true/false, yes/no, 1/0 (any case) or the numbers 0 and 1")


def to_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # already JSON
    try:
        return json.loads(value, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise _Impossible(
            f"it is not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None


def _reject_constant(name: str) -> Any:
    raise _Impossible(f"{name} is not valid JSON")


CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "string": to_string,
    "number": to_number,
    "integer": to_integer,
    "boolean": to_boolean,
    "json": to_json,
    "text": to_text,
}

executor = TypeConverterExecutor()
