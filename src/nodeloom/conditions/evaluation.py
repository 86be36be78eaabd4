"""Evaluating a condition against a value; a condition that cannot be evaluated raises
`NodeError` (`condition_error`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nodeloom.conditions.operators import CONDITION_ERROR, OPERATORS, unknown_operator_message
from nodeloom.conditions.values import as_number, json_type, preview, resolve_path
from nodeloom.errors import NodeError
from nodeloom.regex import PatternError, compile_pattern


def evaluate_condition(condition: Mapping[str, Any], value: Any) -> bool:
    """Test one condition against `value`. Raises NodeError (condition_error)."""
    field = condition.get("field")
    if field is not None and not isinstance(field, str):
        raise NodeError(
            f"A condition's field must be a dotted path such as 'user.address.city'; "
            f"received {preview(field)} ({json_type(field)}).",
            code=CONDITION_ERROR,
            retryable=False,
            details={"field": field},
        )
    operator = _operator(condition.get("operator"), field)
    test = _Test(
        field=field or "",
        operator=operator,
        actual=resolve_path(value, field)[1],
        expected=condition.get("value"),
        case_sensitive=_case_sensitive(condition.get("caseSensitive"), field, operator),
    )
    return _OPERATIONS[operator](test)


def _operator(operator: Any, field: str | None) -> str:
    if operator is None or operator == "":
        return "equals"
    if isinstance(operator, str) and operator in OPERATORS:
        return operator
    raise NodeError(
        unknown_operator_message(operator),
        code=CONDITION_ERROR,
        retryable=False,
        details={"field": field, "operator": operator},
    )


def _case_sensitive(flag: Any, field: str | None, operator: str) -> bool:
    if flag is None:
        return True
    if isinstance(flag, bool):
        return flag
    raise NodeError(
        f"caseSensitive must be true or false; received {preview(flag)} ({json_type(flag)}) "
        f"in the condition on {_where(field)}.",
        code=CONDITION_ERROR,
        retryable=False,
        details={"field": field, "operator": operator},
    )


def _where(field: str | None) -> str:
    return f"field '{field}'" if field else "the value itself (no field)"


@dataclass(frozen=True, slots=True)
class _Test:
    field: str
    operator: str
    actual: Any  # the value at `field`; None when the path does not resolve
    expected: Any  # the condition's `value`
    case_sensitive: bool

    def fail(self, problem: str, received: Any, side: str) -> NodeError:
        what = "received" if side == "field" else "the value to compare with is"
        return NodeError(
            f"Condition '{self.operator}' on {_where(self.field)} {problem}, but {what} "
            f"{preview(received)} ({json_type(received)}).",
            code=CONDITION_ERROR,
            retryable=False,
            details={"field": self.field, "operator": self.operator},
        )

    def text(self, value: Any, side: str) -> str:
        """Scalars as text (numbers and booleans as JSON); null, lists, objects raise."""
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return str(value)
        raise self.fail("needs text", value, side)

    def fold(self, text: str) -> str:
        return text if self.case_sensitive else text.casefold()

    def number(self, value: Any, side: str) -> int | float:
        number = as_number(value)
        if number is None:
            raise self.fail("needs numbers (or numeric strings)", value, side)
        return number


def _same(a: Any, b: Any, case_sensitive: bool) -> bool:
    """equals: JSON equality, case-folded strings, a number equal to its numeric string."""
    if isinstance(a, str) and isinstance(b, str):
        return a == b if case_sensitive else a.casefold() == b.casefold()
    if _is_number(a) or _is_number(b):
        x, y = as_number(a), as_number(b)
        if x is not None and y is not None:
            return x == y
    return _json_equal(a, b)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_equal(a: Any, b: Any) -> bool:
    """Deep equality where booleans are not numbers (`true` != `1`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (Mapping, list)) or isinstance(b, (Mapping, list)):
        return False
    return bool(a == b)


def _equals(t: _Test) -> bool:
    return _same(t.actual, t.expected, t.case_sensitive)


def _contains(t: _Test) -> bool:
    haystack = t.actual
    if haystack is None:
        return False
    if isinstance(haystack, list):
        return any(_same(item, t.expected, t.case_sensitive) for item in haystack)
    needle = t.fold(t.text(t.expected, "value"))
    if isinstance(haystack, Mapping):
        return any(t.fold(str(key)) == needle for key in haystack)
    return needle in t.fold(t.text(haystack, "field"))


def _scalar_text(t: _Test) -> str | None:
    """The field as text for startsWith/endsWith/regex; None when it is null/missing."""
    if t.actual is None:
        return None
    if isinstance(t.actual, (list, Mapping)):
        raise t.fail("needs text", t.actual, "field")
    return t.text(t.actual, "field")


def _starts_with(t: _Test) -> bool:
    text = _scalar_text(t)
    return text is not None and t.fold(text).startswith(t.fold(t.text(t.expected, "value")))


def _ends_with(t: _Test) -> bool:
    text = _scalar_text(t)
    return text is not None and t.fold(text).endswith(t.fold(t.text(t.expected, "value")))


def _greater_than(t: _Test) -> bool:
    return t.actual is not None and t.number(t.actual, "field") > t.number(t.expected, "value")


def _less_than(t: _Test) -> bool:
    return t.actual is not None and t.number(t.actual, "field") < t.number(t.expected, "value")


def _is_empty(t: _Test) -> bool:
    value = t.actual
    return value is None or value == "" or (isinstance(value, (list, Mapping)) and not value)


def _regex(t: _Test) -> bool:
    pattern = t.text(t.expected, "value")
    try:
        compiled = compile_pattern(pattern, ignore_case=not t.case_sensitive)
    except PatternError as error:
        raise NodeError(
            f"Invalid regular expression {preview(pattern)} in condition on "
            f"{_where(t.field)}: {error}",
            code=CONDITION_ERROR,
            retryable=False,
            details={"field": t.field, "operator": t.operator, "pattern": pattern},
        ) from None
    text = _scalar_text(t)
    return text is not None and compiled.search(text) is not None


_OPERATIONS: dict[str, Callable[[_Test], bool]] = {
    "equals": _equals,
    "notEquals": lambda t: not _equals(t),
    "contains": _contains,
    "notContains": lambda t: not _contains(t),
    "startsWith": _starts_with,
    "endsWith": _ends_with,
    "greaterThan": _greater_than,
    "lessThan": _less_than,
    "exists": lambda t: t.actual is not None,
    "notExists": lambda t: t.actual is None,
    "isEmpty": _is_empty,
    "isNotEmpty": lambda t: not _is_empty(t),
    "regex": _regex,
}


__all__ = ["evaluate_condition"]
