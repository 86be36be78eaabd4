"""The normalized tool response every tool node's `result` is:

    {"status", "json", "text", "items", "result", "error"}

A Python function's return value becomes one like this: a dict whose keys are all among
those six is taken as already normalized (missing keys are null, `status` 200); any other
dict is `json` (its `text`/`output` string is `text`, its `items` list is `items`); a list
is `items`; a string is `text`; anything else is `result` (and its text). Values are made
plain JSON (tuples become lists, unknown objects their text).
"""

from __future__ import annotations

import json
from typing import Any

KEYS = ("status", "json", "text", "items", "result", "error")


def plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def normalize(value: Any) -> dict[str, Any]:
    value = plain(value)
    if isinstance(value, dict) and value and set(value) <= set(KEYS):
        normalized = {key: value.get(key) for key in KEYS}
        if normalized["status"] is None:
            normalized["status"] = 200
        return normalized
    result: dict[str, Any] = {key: None for key in KEYS}
    result.update(status=200, result=value)
    if isinstance(value, dict):
        result["json"] = value
        text = value.get("text") or value.get("output")
        result["text"] = text if isinstance(text, str) else None
        result["items"] = value.get("items") if isinstance(value.get("items"), list) else None
    elif isinstance(value, list):
        result["items"] = value
    elif isinstance(value, str):
        result["text"] = value
    elif value is not None:
        result["text"] = str(value)
    return result


def items_of(payload: Any) -> list[Any] | None:
    """The list in a JSON payload: the payload itself, or its items / results / data."""
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in ("items", "results", "data"):
            if isinstance(payload.get(key), list):
                return payload[key]
    return None


__all__ = ["KEYS", "items_of", "normalize", "plain"]
