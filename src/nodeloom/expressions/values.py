"""How expression values are named, shown in messages, and turned into text.

The language knows six kinds of value, named as a workflow user knows them: string,
number, boolean, null, array, object (`type(x)` returns these names).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nodeloom.errors import ExpressionEvalError
from nodeloom.values import json_default

_PREVIEW_LIMIT = 40


def is_number(value: Any) -> bool:
    """True for int and float, false for bool (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def a_kind(value: Any) -> str:
    """The kind of a value with its article: `a string`, `an array`, `null`."""
    if value is None:
        return "null"
    name = type_name(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def preview(value: Any) -> str:
    """A short rendering of a value for error messages: `'abc'`, `42`, `{"a": 1}`."""
    if isinstance(value, str):
        shown = repr(value)
    else:
        try:
            shown = to_text(value)
        except ExpressionEvalError:
            shown = f"<{type_name(value)}>"
    return shown if len(shown) <= _PREVIEW_LIMIT else shown[: _PREVIEW_LIMIT - 3] + "..."


def describe(value: Any) -> str:
    """The kind and a preview of a value: `number 42`, `string 'abc'`, `null`."""
    if value is None:
        return "null"
    return f"{type_name(value)} {preview(value)}"


def to_text(value: Any) -> str:
    """The text a value renders as inside a larger string.

    str as is; true/false; null; numbers as Python writes them; arrays and objects as
    compact JSON.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        try:
            return str(value)
        except ValueError:  # more than 4300 digits
            raise ExpressionEvalError("number is too large to render as text") from None
    return to_json(value)


def to_json(value: Any) -> str:
    """JSON text of a value (`json(x)`); raises ExpressionEvalError if it has no JSON form."""
    try:
        return json.dumps(value, ensure_ascii=False, default=json_default)
    except (TypeError, ValueError) as exc:
        raise ExpressionEvalError(f"cannot convert {type_name(value)} to JSON: {exc}") from None
    except RecursionError:
        raise ExpressionEvalError(
            "cannot convert to JSON: the value is nested too deeply"
        ) from None
