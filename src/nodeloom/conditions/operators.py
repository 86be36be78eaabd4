"""The condition operators: their names, which need a value, and the did-you-mean hint."""

from __future__ import annotations

import difflib
from typing import Any

from nodeloom.conditions.values import preview

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
NEEDS_VALUE = frozenset(
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
CONDITION_ERROR = "condition_error"


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


__all__ = [
    "CONDITION_ERROR",
    "NEEDS_VALUE",
    "OPERATORS",
    "UNARY_OPERATORS",
    "unknown_operator_message",
]
