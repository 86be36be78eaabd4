"""Checking a condition statically (for a definition's `check` hook), and the parameters
of the nodes that test one condition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.conditions.operators import NEEDS_VALUE, OPERATORS, unknown_operator_message
from nodeloom.conditions.values import as_number, json_type, preview
from nodeloom.regex import PatternError, compile_pattern


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
    if operator in NEEDS_VALUE and value is None:
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


__all__ = ["check_condition", "condition_parameters"]
