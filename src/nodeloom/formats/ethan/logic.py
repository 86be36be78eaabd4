"""JsonLogic conditions (`when`, `until`, router cases), with templates inside them.

A condition is evaluated with panzi-json-logic against the data
`{"state", "inputs", "result", "output", "node": {"id", "type"}}`, so `{"var": "state.score"}`
reads the state. A string inside the condition that holds a template
(`"{{ state.score }}"`, as in the seed's router example) is rendered first, with the same
names a map template sees, and its value takes the string's place with its type; it is
never read as JsonLogic itself, so a rendered object stays a value. Truthiness is
JsonLogic's (`[]`, `""`, `0` and `null` are false).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from json_logic import jsonLogic
from json_logic.builtins import BUILTINS, to_bool

from nodeloom.errors import NodeError
from nodeloom.formats.ethan import templates

# Operations `apply` handles itself, before the table of BUILTINS.
_SPECIAL = ("if", "?:", "and", "or", "filter", "reduce", "map", "all", "some", "none")
OPERATIONS = frozenset(BUILTINS) | frozenset(_SPECIAL)
_RENDERED = "$rendered"  # where rendered template values wait, read back with `var`


class ConditionError(NodeError):
    """A condition could not be evaluated. Not retryable."""

    code = "condition_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def problems(logic: Any) -> list[str]:
    """Static problems of a condition: unknown operations, templates that do not compile."""
    found: list[str] = []
    _walk(logic, found)
    return found


def _walk(logic: Any, found: list[str]) -> None:
    if isinstance(logic, str):
        if templates.has_template(logic):
            error = templates.check(logic)
            if error:
                found.append(f"the template {logic!r} does not compile: {error}")
    elif isinstance(logic, list):
        for item in logic:
            _walk(item, found)
    elif isinstance(logic, dict) and len(logic) == 1:
        operation, arguments = next(iter(logic.items()))
        if operation not in OPERATIONS:
            found.append(
                f"unknown JsonLogic operation {operation!r}; operations: "
                + ", ".join(sorted(OPERATIONS))
            )
        _walk(arguments, found)
    elif isinstance(logic, dict):
        for item in logic.values():
            _walk(item, found)


def evaluate(logic: Any, data: Mapping[str, Any], scope: Mapping[str, Any], where: str) -> bool:
    """Whether the condition holds. `scope` is what templates inside it see."""
    rendered: list[Any] = []
    prepared = _prepare(logic, scope, rendered, where)
    try:
        outcome = jsonLogic(prepared, {**data, _RENDERED: rendered})
    except Exception as exc:
        raise ConditionError(f"{where}: {type(exc).__name__}: {exc}") from None
    return to_bool(outcome)


def _prepare(logic: Any, scope: Mapping[str, Any], rendered: list[Any], where: str) -> Any:
    if isinstance(logic, str) and templates.has_template(logic):
        try:
            value = templates.render(logic, scope)
        except templates.TemplateRenderError as exc:
            raise ConditionError(f"{where}: {exc}") from None
        rendered.append(value)
        return {"var": f"{_RENDERED}.{len(rendered) - 1}"}
    if isinstance(logic, list):
        return [_prepare(item, scope, rendered, where) for item in logic]
    if isinstance(logic, dict):
        return {key: _prepare(item, scope, rendered, where) for key, item in logic.items()}
    return logic


Evaluator = Callable[[Any], bool]

__all__ = ["OPERATIONS", "ConditionError", "Evaluator", "evaluate", "problems"]
