"""What a condition reads: dotted paths into a value, numbers, JSON type names, previews."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


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


__all__ = ["as_number", "json_type", "preview", "resolve_path", "split_path"]
