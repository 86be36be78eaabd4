"""Matching an expected value against what a run produced.

By default a match is a *subset* match: every key an expected mapping names must be present
and match, keys it does not name are ignored; lists match item by item and must have the
same length; other values must be equal. Four operators, each a mapping with one key,
change that at any depth:

    {$exact: VALUE}     equal, with no extra keys anywhere inside
    {$contains: TEXT}   a string containing TEXT, or a list with an item matching TEXT
    {$regex: PATTERN}   a string in which PATTERN is found (re.search)
    {$any: true}        any value at all (the key only has to be present)
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

OPERATORS = ("$exact", "$contains", "$regex", "$any")


def mismatches(expected: Any, actual: Any, path: str) -> list[str]:
    """Every way `actual` fails to match `expected`, each starting with its path."""
    operator = _operator(expected)
    if operator is not None:
        return _apply(operator, expected[operator], actual, path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {_show(actual)}"]
        problems: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                keys = ", ".join(map(str, actual)) or "none"
                problems.append(f"{path}: no key {key!r} (it has: {keys})")
            else:
                problems += mismatches(value, actual[key], f"{path}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {_show(actual)}"]
        if len(expected) != len(actual):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {_show(actual)}"]
        problems = []
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problems += mismatches(want, got, f"{path}[{i}]")
        return problems
    if _equal(expected, actual):
        return []
    return [_difference(path, expected, actual)]


def _operator(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) == 1:
        (key,) = value
        if isinstance(key, str) and key.startswith("$"):
            if key not in OPERATORS:
                raise ValueError(f"unknown operator {key!r}; the operators are {OPERATORS}")
            return key
    return None


def _apply(operator: str, argument: Any, actual: Any, path: str) -> list[str]:
    if operator == "$any":
        return []
    if operator == "$exact":
        if _exactly(argument, actual):
            return []
        return [_difference(path, argument, actual)]
    if operator == "$regex":
        if isinstance(actual, str) and re.search(str(argument), actual):
            return []
        return [f"{path}: expected a match of /{argument}/, got {_show(actual)}"]
    # $contains
    if isinstance(actual, str) and isinstance(argument, str) and argument in actual:
        return []
    if isinstance(actual, list) and any(not mismatches(argument, item, path) for item in actual):
        return []
    return [f"{path}: expected something containing {_show(argument)}, got {_show(actual)}"]


def _equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def _exactly(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            _exactly(expected[k], actual[k]) for k in expected
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _exactly(a, b) for a, b in zip(expected, actual, strict=True)
        )
    return _equal(expected, actual)


def _difference(path: str, expected: Any, actual: Any) -> str:
    head = f"{path}: expected {_show(expected)}, got {_show(actual)}"
    want, got = _lines(expected), _lines(actual)
    if len(want) > 1 or len(got) > 1:
        diff = difflib.unified_diff(want, got, "expected", "actual", lineterm="")
        head += "\n" + "\n".join(diff)
    return head


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(
        value, indent=2, ensure_ascii=False, sort_keys=True, default=repr
    ).splitlines()


def _show(value: Any, limit: int = 200) -> str:
    text = (
        repr(value)
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, default=repr)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"
