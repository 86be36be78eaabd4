"""Run-time coercion of values on side sockets (the spine is never coerced)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from nodeloom.errors import CoercionError


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return ""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(m, dict) and "content" in m for m in value)
    ):
        return str(value[-1]["content"])  # messages -> string: the last message's content
    return json.dumps(value, ensure_ascii=False)


def _to_text(value: Any) -> str:
    if isinstance(value, dict) and "text" in value and isinstance(value["text"], str):
        return value["text"]
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return _to_string(value)


def _to_float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(value.strip())
    raise ValueError


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return int(value.strip())
    raise ValueError


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise ValueError


def _to_messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return value
    if isinstance(value, dict) and "role" in value and "content" in value:
        return [value]
    return [{"role": "user", "content": _to_string(value)}]


def _to_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "string": _to_string,
    "text": _to_text,
    "float": _to_float,
    "int": _to_int,
    "boolean": _to_boolean,
    "messages": _to_messages,
    "json": _to_json,
}


def coerce(value: Any, source: str, target: str) -> Any:
    """Convert `value` from a `source` socket for a `target` socket, or raise CoercionError."""
    if source == target or target in ("any", "data"):
        return value
    convert = _CONVERTERS.get(target)
    if convert is None:
        return value
    try:
        return convert(value)
    except (ValueError, TypeError, KeyError, IndexError):
        shown = json.dumps(value, default=str)[:80]
        raise CoercionError(
            f"cannot convert {shown} from a '{source}' socket to '{target}'"
        ) from None
