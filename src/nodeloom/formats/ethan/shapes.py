"""`state.shape`: the broad type of each state key, written as in the seed.

    str, int, float, bool, dict, list, any, null      (also None, number, string, ...)
    list[str], dict[str, int]                          the outer type is checked
    str | null                                          any of several

`problem(type_text)` says why a written type is not understood (load time); `mismatch`
says why a value does not fit one (the initial state at load time, the inputs at run
time). Shapes that are not a string (nested objects) are not checked.
"""

from __future__ import annotations

import re
from typing import Any

from nodeloom.values import kind_of

_NAMES: dict[str, tuple[type, ...] | None] = {
    "str": (str,),
    "string": (str,),
    "int": (int,),
    "integer": (int,),
    "float": (int, float),
    "number": (int, float),
    "bool": (bool,),
    "boolean": (bool,),
    "dict": (dict,),
    "object": (dict,),
    "list": (list,),
    "array": (list,),
    "any": None,
    "null": (type(None),),
    "none": (type(None),),
}
_TERM = re.compile(r"^\s*([A-Za-z_]+)\s*(\[.*\])?\s*$")


def _terms(type_text: str) -> list[str] | None:
    names = []
    for part in _split(type_text):
        match = _TERM.match(part)
        if match is None:
            return None
        names.append(match.group(1).lower())
    return names


def _split(text: str) -> list[str]:
    """Split on `|` outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def problem(type_text: Any) -> str | None:
    if not isinstance(type_text, str):
        return None
    names = _terms(type_text)
    if names is None:
        return f"cannot read the type {type_text!r}; write e.g. str, int, list[str], str | null"
    unknown = [n for n in names if n not in _NAMES]
    if unknown:
        return f"unknown type {unknown[0]!r} in {type_text!r}; types: " + ", ".join(
            ("str", "int", "float", "bool", "dict", "list", "any", "null")
        )
    return None


def mismatch(type_text: Any, value: Any) -> str | None:
    """Why `value` does not fit `type_text`, or None (also None for types not understood)."""
    if not isinstance(type_text, str) or problem(type_text) is not None:
        return None
    names = _terms(type_text) or []
    for name in names:
        allowed = _NAMES[name]
        if allowed is None:
            return None
        if isinstance(value, bool) and bool not in allowed:
            continue
        if isinstance(value, allowed):
            return None
    return f"expected {type_text}, got {kind_of(value)}"


__all__ = ["mismatch", "problem"]
