"""Parameters in a node's `data`: static checks, node settings, and expression compilation."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from nodeloom.errors import ExpressionSyntaxError, Issue
from nodeloom.expressions import Template, compile_template, has_expression
from nodeloom.graph.definitions import SETTINGS, SIDE_EFFECTS, DefinitionSpec, ParameterSpec
from nodeloom.values import kind_of

ON_ERROR_MODES = ("stop", "continue", "error_output")
# Parameters never rendered as templates: source code (Python f-strings and JSONata objects
# use `{{` themselves; code reads its data through its input) and inner graphs.
RAW_TYPES = frozenset({"code", "graph"})

cached_template = lru_cache(maxsize=8192)(compile_template)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Per-node retry (seed 003). Delay before attempt n+1 is
    min(initial_interval * backoff_factor ** (n - 1), max_interval) seconds."""

    max_attempts: int = 3
    initial_interval: float = 1.0
    backoff_factor: float = 2.0
    max_interval: float = 30.0
    retry_on: tuple[str, ...] | None = None  # error codes or exception names; None: retryable

    def delay(self, attempt: int) -> float:
        return min(self.initial_interval * self.backoff_factor ** (attempt - 1), self.max_interval)

    def should_retry(self, exc: BaseException, attempt: int) -> bool:
        if attempt >= self.max_attempts:
            return False
        if self.retry_on is None:
            return bool(getattr(exc, "retryable", True))
        code = getattr(exc, "code", None)
        return code in self.retry_on or type(exc).__name__ in self.retry_on


_RETRY_FIELDS = {
    "max_attempts": int,
    "initial_interval": (int, float),
    "backoff_factor": (int, float),
    "max_interval": (int, float),
    "retry_on": list,
}


def parse_retry(raw: Any) -> RetryPolicy | None:
    if not raw:
        return None
    fields = {k: v for k, v in raw.items() if k in _RETRY_FIELDS}
    if fields.get("retry_on") is not None:
        fields["retry_on"] = tuple(fields["retry_on"])
    return RetryPolicy(**fields)


def settings_issues(data: Mapping[str, Any], where: str, definition: DefinitionSpec) -> list[Issue]:
    issues: list[Issue] = []
    on_error = data.get("on_error", "stop")
    if on_error not in ON_ERROR_MODES:
        issues.append(
            Issue(
                "invalid_parameter",
                f"on_error must be one of {', '.join(ON_ERROR_MODES)}, got {on_error!r}",
                node_id=where,
                field="on_error",
            )
        )
    activation = data.get("activation", "join")
    if activation not in ("join", "each"):
        issues.append(
            Issue(
                "invalid_parameter",
                f"activation is join or each, got {activation!r}",
                node_id=where,
                field="activation",
            )
        )
    if definition.parameter("timeout") is None:
        timeout = data.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            issues.append(
                Issue(
                    "invalid_parameter",
                    f"timeout is a number of seconds above 0, got {timeout!r}",
                    node_id=where,
                    field="timeout",
                )
            )
    retry = data.get("retry")
    if retry is not None:
        issues.extend(_retry_issues(retry, where))
    side_effects = data.get("side_effects")
    if side_effects is not None and side_effects not in SIDE_EFFECTS:
        issues.append(
            Issue(
                "invalid_parameter",
                f"side_effects is one of {', '.join(SIDE_EFFECTS)}, got {side_effects!r}",
                node_id=where,
                field="side_effects",
            )
        )
    return issues


def pinned_issues(data: Mapping[str, Any], where: str, ports: Collection[str]) -> list[Issue]:
    """A pinned output is an object of the node's output ports -> values."""
    pinned = data.get("pinned")
    if pinned is None:
        return []
    if not isinstance(pinned, dict) or not pinned:
        message = (
            "pinned is an object of output port -> value, e.g. "
            '{"output": ...}; remove it to run the node again'
        )
    elif unknown := sorted(set(pinned) - set(ports)):
        message = (
            f"pinned names port(s) {', '.join(unknown)} the node does not have; "
            f"its output ports: {', '.join(sorted(ports))}"
        )
    else:
        return []
    return [Issue("invalid_parameter", message, node_id=where, field="pinned")]


def _retry_issues(retry: Any, where: str) -> list[Issue]:
    if not isinstance(retry, dict):
        return [
            Issue(
                "invalid_parameter",
                "retry is an object {max_attempts, initial_interval, "
                "backoff_factor, max_interval, retry_on}",
                node_id=where,
                field="retry",
            )
        ]
    issues = []
    for key, value in retry.items():
        expected = _RETRY_FIELDS.get(key)
        if expected is None:
            issues.append(
                Issue(
                    "invalid_parameter",
                    f"retry has no field '{key}'; valid: {', '.join(_RETRY_FIELDS)}",
                    node_id=where,
                    field=f"retry.{key}",
                )
            )
        elif isinstance(value, bool) or not isinstance(value, expected):
            issues.append(
                Issue(
                    "invalid_parameter",
                    f"retry.{key} has the wrong type: {value!r}",
                    node_id=where,
                    field=f"retry.{key}",
                )
            )
        elif key == "max_attempts" and value < 1:
            issues.append(
                Issue(
                    "invalid_parameter",
                    "retry.max_attempts must be at least 1",
                    node_id=where,
                    field="retry.max_attempts",
                )
            )
        elif key != "retry_on" and key != "max_attempts" and value < 0:
            issues.append(
                Issue(
                    "invalid_parameter",
                    f"retry.{key} must not be negative",
                    node_id=where,
                    field=f"retry.{key}",
                )
            )
    return issues


def check_value(parameter: ParameterSpec, value: Any) -> list[str]:
    """Messages for an inline value that does not fit its parameter (expressions pass)."""
    if value is None or (
        isinstance(value, str) and has_expression(value) and parameter.type not in RAW_TYPES
    ):
        return []
    kind = parameter.type
    if kind in ("string", "text", "code", "expression"):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not isinstance(value, str) and not (number and parameter.allow_number):
            return [f"'{parameter.id}' must be a string, got {kind_of(value)}"]
    elif kind in ("number", "integer"):
        wanted = int if kind == "integer" else (int, float)
        if isinstance(value, bool) or not isinstance(value, wanted):
            noun = "an integer" if kind == "integer" else "a number"
            return [f"'{parameter.id}' must be {noun}, got {kind_of(value)} {value!r}"]
        if parameter.minimum is not None and value < parameter.minimum:
            return [f"'{parameter.id}' must be at least {parameter.minimum}, got {value}"]
        if parameter.maximum is not None and value > parameter.maximum:
            return [f"'{parameter.id}' must be at most {parameter.maximum}, got {value}"]
    elif kind == "boolean":
        if not isinstance(value, bool):
            return [f"'{parameter.id}' must be true or false, got {kind_of(value)} {value!r}"]
    elif kind == "enum" and value not in parameter.options:
        hint = difflib.get_close_matches(str(value), parameter.options, n=1)
        suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
        return [
            f"'{parameter.id}' must be one of {', '.join(parameter.options)}, got "
            f"{value!r}{suggestion}"
        ]
    return []


def compile_templates(
    definition: DefinitionSpec, data: Mapping[str, Any]
) -> tuple[dict[str, Template], list[tuple[str, ExpressionSyntaxError]]]:
    """Compile every `{{ }}` in the node's parameters, keyed by field path."""
    templates: dict[str, Template] = {}
    errors: list[tuple[str, ExpressionSyntaxError]] = []
    for key, value in data.items():
        if key in SETTINGS:
            continue
        parameter = definition.parameter(key)
        if parameter is None or parameter.type in RAW_TYPES:
            continue
        _collect(value, key, templates, errors)
    return templates, errors


def _collect(
    value: Any,
    path: str,
    templates: dict[str, Template],
    errors: list[tuple[str, ExpressionSyntaxError]],
) -> None:
    if isinstance(value, str):
        if has_expression(value):
            try:
                templates[path] = cached_template(value)
            except ExpressionSyntaxError as exc:
                errors.append((path, exc))
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(item, f"{path}.{key}", templates, errors)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _collect(item, f"{path}[{index}]", templates, errors)
