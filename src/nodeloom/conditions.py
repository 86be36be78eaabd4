"""Conditions: `{field, operator, value, caseSensitive}` tested against a JSON value.

One module, shared by Conditional, Switch and Filter, so the three nodes agree on every
operator. The full table is in docs/conditions.md; in short:

- `field` is a dotted path into the value (`user.address.city`, `items.0.name`); an empty
  field is the value itself. A path that does not resolve reads as null.
- String operators (equals, notEquals, contains, notContains, startsWith, endsWith, regex)
  ignore case when `caseSensitive` is false (default true). Numbers and booleans read as
  their JSON text (`42`, `true`) where text is needed.
- equals is JSON equality, except that a number equals its numeric string (`42` = `"42"`)
  and `true` never equals `1`.
- greaterThan/lessThan compare numbers or numeric strings; null reads as "no", anything
  else that is not a number raises.
- exists: the path resolves to a non-null value. isEmpty: null, "", [], {} or missing.
- regex searches with RE2 (`nodeloom.regex`): linear time whatever the pattern, so a
  webhook payload cannot stall the run; backreferences and lookaround are refused.

A condition that cannot be evaluated raises `NodeError` with code `condition_error`
(not retryable: the same input fails the same way). `check_condition` finds the same
problems statically, for a definition's `check` hook.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.regex import PatternError, compile_pattern

OPERATORS: tuple[str, ...] = (
    "equals",
    "notEquals",
    "contains",
    "notContains",
    "startsWith",
    "endsWith",
    "greaterThan",
    "lessThan",
    "exists",
    "notExists",
    "isEmpty",
    "isNotEmpty",
    "regex",
)
# Operators that test the field alone; their `value` is ignored.
UNARY_OPERATORS = frozenset({"exists", "notExists", "isEmpty", "isNotEmpty"})
# Operators meaningless without a value (equals/notEquals may compare with null).
_NEEDS_VALUE = frozenset(
    {"contains", "notContains", "startsWith", "endsWith", "greaterThan", "lessThan", "regex"}
)
# Names people type from other tools, for the did-you-mean hint only.
_ALIASES = {
    "==": "equals",
    "=": "equals",
    "eq": "equals",
    "!=": "notEquals",
    "ne": "notEquals",
    ">": "greaterThan",
    "gt": "greaterThan",
    "<": "lessThan",
    "lt": "lessThan",
    "in": "contains",
    "includes": "contains",
    "matches": "regex",
    "match": "regex",
}
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_CONDITION_ERROR = "condition_error"


# --- paths -------------------------------------------------------------------------------


def resolve_path(value: Any, path: str | None) -> tuple[bool, Any]:
    """Follow a dotted path (`user.address.city`, `items.0.name`) into `value`.

    Returns `(found, resolved)`; `(False, None)` when a step is missing. Object keys are
    matched exactly; on a list a step must be a non-negative index. An empty path is
    `value` itself. Keys that contain a dot cannot be reached.
    """
    current = value
    for step in split_path(path):
        if isinstance(current, Mapping):
            if step not in current:
                return False, None
            current = current[step]
        elif isinstance(current, list):
            if not (step.isascii() and step.isdigit()) or int(step) >= len(current):
                return False, None
            current = current[int(step)]
        else:
            return False, None
    return True, current


def split_path(path: str | None) -> list[str]:
    path = (path or "").strip()
    return path.split(".") if path else []


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages: null, boolean, number, string, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def preview(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of a value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_number(value: Any) -> int | float | None:
    """A number, or a string holding one (`"42"`, `" 1.5e3 "`); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(text := value.strip()):
        try:
            return int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            return None
    return None


# --- evaluation --------------------------------------------------------------------------


def evaluate_condition(condition: Mapping[str, Any], value: Any) -> bool:
    """Test one condition against `value`. Raises NodeError (condition_error)."""
    field = condition.get("field")
    if field is not None and not isinstance(field, str):
        raise NodeError(
            f"A condition's field must be a dotted path such as 'user.address.city'; "
            f"received {preview(field)} ({json_type(field)}).",
            code=_CONDITION_ERROR,
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
        code=_CONDITION_ERROR,
        retryable=False,
        details={"field": field, "operator": operator},
    )


def unknown_operator_message(operator: Any) -> str:
    hint = ""
    if isinstance(operator, str):
        guess = _suggest(operator)
        hint = f" Did you mean '{guess}'?" if guess else ""
    return (
        f"Unknown condition operator {preview(operator)}.{hint} "
        f"Valid operators: {', '.join(OPERATORS)}."
    )


def _suggest(operator: str) -> str | None:
    lowered = {name.lower(): name for name in OPERATORS}
    key = operator.strip().lower()
    if key in lowered:
        return lowered[key]
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def _case_sensitive(flag: Any, field: str | None, operator: str) -> bool:
    if flag is None:
        return True
    if isinstance(flag, bool):
        return flag
    raise NodeError(
        f"caseSensitive must be true or false; received {preview(flag)} ({json_type(flag)}) "
        f"in the condition on {_where(field)}.",
        code=_CONDITION_ERROR,
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
            code=_CONDITION_ERROR,
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
            code=_CONDITION_ERROR,
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


# --- static check ------------------------------------------------------------------------


def check_condition(condition: Any, *, prefix: str = "") -> list[tuple[str, str]]:
    """Problems in a condition as `(field, message)`, without evaluating it.

    Values holding a `{{ }}` expression are skipped: they are only known at run time.
    `prefix` locates the condition inside a parameter (`cases[1].`).
    """
    if not isinstance(condition, Mapping):
        where = prefix.rstrip(".") or "condition"
        return [(where, "A condition must be an object {field, operator, value, caseSensitive}.")]
    issues: list[tuple[str, str]] = []
    field = condition.get("field")
    if field is not None and not isinstance(field, str):
        issues.append(
            (f"{prefix}field", "The field must be a dotted path such as 'user.address.city'.")
        )
    flag = condition.get("caseSensitive")
    if flag is not None and not isinstance(flag, bool) and not _is_expression(flag):
        issues.append((f"{prefix}caseSensitive", "caseSensitive must be true or false."))
    operator = condition.get("operator")
    if operator is None or operator == "":
        operator = "equals"
    if _is_expression(operator):
        return issues
    if operator not in OPERATORS:
        issues.append((f"{prefix}operator", unknown_operator_message(operator)))
        return issues
    value = condition.get("value")
    if _is_expression(value):
        return issues
    if operator in _NEEDS_VALUE and value is None:
        issues.append((f"{prefix}value", f"The operator '{operator}' needs a value."))
    elif operator in ("greaterThan", "lessThan") and as_number(value) is None:
        issues.append(
            (
                f"{prefix}value",
                f"The operator '{operator}' compares numbers; {preview(value)} "
                f"({json_type(value)}) is not a number.",
            )
        )
    elif operator in ("startsWith", "endsWith", "regex") and isinstance(value, (list, Mapping)):
        issues.append((f"{prefix}value", f"The operator '{operator}' needs text."))
    elif operator == "regex" and isinstance(value, str):
        try:
            compile_pattern(value, ignore_case=flag is False)
        except PatternError as error:
            issues.append(
                (f"{prefix}value", f"Invalid regular expression {preview(value)}: {error}")
            )
    return issues


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


__all__ = [
    "OPERATORS",
    "UNARY_OPERATORS",
    "as_number",
    "check_condition",
    "evaluate_condition",
    "json_type",
    "preview",
    "resolve_path",
    "split_path",
    "unknown_operator_message",
]


def condition_parameters(field_help: str, placeholder: str) -> tuple[Any, ...]:
    """The `field`, `operator`, `value`, `caseSensitive` parameters of the nodes that test
    one condition (Conditional, Filter), declared once."""
    from nodeloom.plugins.contract import Parameter

    return (
        Parameter("field", "string", "Field", description=field_help, placeholder=placeholder),
        Parameter(
            "operator",
            "enum",
            "Operator",
            default="equals",
            options=OPERATORS,
            description="How to compare; see docs/conditions.md.",
        ),
        Parameter(
            "value",
            "json",
            "Value",
            description="What to compare with (any JSON "
            "scalar); ignored by exists, notExists, isEmpty and isNotEmpty.",
        ),
        Parameter(
            "caseSensitive",
            "boolean",
            "Case sensitive",
            default=True,
            description="When off, string operators and regex ignore case.",
        ),
    )
