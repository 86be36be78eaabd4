"""Jinja templates of Ethan graphs, rendered in a sandbox.

    render(source, scope)       a string that is exactly one `{{ expr }}` (whitespace
                                around it allowed) keeps the value's type; any other text
                                renders to text ("{{ a }} and {{ b }}" renders both)
    render_value(value, scope)  the same, through the strings of a dict or list
    check(source)               the syntax error of a template, or None (load time)
    expand_partials(...)        `{{> name }}` replaced by the partial's text (load time)

The environment is Jinja2's `ImmutableSandboxedEnvironment`: `''.__class__` and the like
raise a SecurityError, and so do methods that change a list or dict
(`state.history.append(...)`), so a template can only read the state. It uses
`StrictUndefined`: a missing name or key is an error that names it,
never an empty string (write `x | default(...)` for an optional value). On a mapping,
`x.name` reads the key `name` before any attribute, so `state.items` is the state's
`items`, not `dict.items`; without such a key the attribute is used (`state.get('a')`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from jinja2 import StrictUndefined, TemplateError, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from nodeloom.errors import NodeError

MAX_PARTIAL_DEPTH = 10
PARTIAL = re.compile(r"{{>\s*([\w./-]+)\s*}}")


class _Environment(ImmutableSandboxedEnvironment):
    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping):
            try:
                return obj[attribute]
            except (KeyError, TypeError):
                pass
        return super().getattr(obj, attribute)


ENVIRONMENT = _Environment(
    undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True
)


class TemplateRenderError(NodeError):
    """A template failed while rendering: a missing name, a sandbox violation, a bad
    operation. Not retryable: it would fail the same way again."""

    code = "template_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def has_template(text: Any) -> bool:
    return isinstance(text, str) and ("{{" in text or "{%" in text)


@functools.lru_cache(maxsize=4096)
def single_expression(source: str) -> str | None:
    """The expression of a template that is exactly one `{{ ... }}`, else None."""
    if "{{" not in source:
        return None
    try:
        tokens = list(ENVIRONMENT.lex(source))
    except TemplateError:
        return None
    inside: list[str] | None = None
    expression: str | None = None
    for _, kind, value in tokens:
        if kind == "variable_begin":
            if expression is not None or inside is not None:
                return None
            inside = []
        elif kind == "variable_end":
            if inside is None:
                return None
            expression, inside = "".join(inside).strip(), None
        elif inside is not None:
            inside.append(value)
        elif kind != "data" or value.strip():
            return None
    return expression or None


@functools.lru_cache(maxsize=4096)
def _compiled_expression(expression: str) -> Any:
    return ENVIRONMENT.compile_expression(expression, undefined_to_none=False)


@functools.lru_cache(maxsize=4096)
def _compiled_template(source: str) -> Any:
    return ENVIRONMENT.from_string(source)


def check(source: str) -> str | None:
    """Why `source` does not compile, or None."""
    try:
        expression = single_expression(source)
        if expression is not None:
            _compiled_expression(expression)
        else:
            _compiled_template(source)
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line and "\n" in source else ""
        return f"{exc.message or exc}{where}"
    return None


def render(source: str, scope: Mapping[str, Any]) -> Any:
    """The template's value (one expression) or text. TemplateRenderError if it fails."""
    if not has_template(source):
        return source
    try:
        expression = single_expression(source)
        if expression is not None:
            value = _compiled_expression(expression)(**scope)
            _refuse_undefined(value)
            return value
        return _compiled_template(source).render(scope)
    except TemplateRenderError:
        raise
    except TemplateError as exc:
        raise TemplateRenderError(f"template {_short(source)}: {exc.message or exc}") from None
    except Exception as exc:
        raise TemplateRenderError(
            f"template {_short(source)}: {type(exc).__name__}: {exc}"
        ) from None


def render_value(value: Any, scope: Mapping[str, Any]) -> Any:
    """`value` with every template string in it rendered (dicts and lists walked)."""
    if isinstance(value, str):
        return render(value, scope)
    if isinstance(value, dict):
        return {key: render_value(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [render_value(item, scope) for item in value]
    return value


def _refuse_undefined(value: Any) -> None:
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()  # raises UndefinedError naming what is missing
    if isinstance(value, dict):
        for item in value.values():
            _refuse_undefined(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_undefined(item)


def expand_partials(source: str, partials: Mapping[str, str]) -> str:
    """`source` with each `{{> name }}` replaced by the partial's text, recursively.
    KeyError(name) for an unknown partial; ValueError for partials that include each
    other in a cycle (or nest deeper than MAX_PARTIAL_DEPTH)."""
    return _expand(source, partials, ())


def _expand(source: str, partials: Mapping[str, str], trail: tuple[str, ...]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in partials:
            raise KeyError(name)
        if name in trail or len(trail) >= MAX_PARTIAL_DEPTH:
            path = " -> ".join((*trail, name))
            raise ValueError(f"partials include each other in a cycle: {path}")
        return _expand(partials[name], partials, (*trail, name))

    return PARTIAL.sub(replace, source)


def partial_names(source: str) -> list[str]:
    return PARTIAL.findall(source)


def _short(source: str) -> str:
    text = " ".join(source.split())
    return repr(text if len(text) <= 80 else text[:79] + "…")


__all__ = [
    "ENVIRONMENT",
    "TemplateRenderError",
    "check",
    "expand_partials",
    "has_template",
    "partial_names",
    "render",
    "render_value",
    "single_expression",
]
