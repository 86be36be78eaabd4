"""What travels on wires at run time: `DataValue` and `BinaryRef`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from json import encoder as _json_encoder
from typing import Any


@dataclass(frozen=True, slots=True)
class BinaryRef:
    """A pointer to content stored outside the graph (a file, a blob), never the bytes.

    In events and results it is written as `{"$ref": ..., "mime": ..., "size": ...}`.
    """

    ref: str
    mime: str = "application/octet-stream"
    size: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"$ref": self.ref, "mime": self.mime, "size": self.size}


@dataclass(frozen=True, slots=True)
class DataValue:
    """A value on a port, tagged with its socket type (see `nodeloom.graph.sockets`)."""

    type: str
    value: Any


def json_default(obj: Any) -> Any:
    """`json.dumps(default=...)` hook: port values become plain JSON."""
    if isinstance(obj, BinaryRef):
        return obj.to_json()
    if isinstance(obj, DataValue):
        return obj.value
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, bytes):
        return {"$bytes": len(obj)}
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def to_json_text(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, default=json_default, ensure_ascii=False, indent=indent)


def kind_of(value: Any) -> str:
    """A JSON value's kind for messages that say what was received: 'null', 'a boolean',
    'an integer', 'a number', 'a string', 'a list', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def plain(value: Any) -> Any:
    """Unwrap a DataValue; anything else is returned as it is."""
    return value.value if isinstance(value, DataValue) else value


def json_encoder(
    default: Callable[[Any], Any],
    *,
    key_separator: str = ":",
    item_separator: str = ",",
    sort_keys: bool = False,
) -> Callable[[Any], str]:
    """`json.JSONEncoder(...).encode` with these options (and `ensure_ascii=False`), its C
    encoder built once: `encode` builds one at every call (a third of a small value's
    time). Same output; without the circular check (no shared markers dict, so it is safe
    across threads): a circular value raises RecursionError, not ValueError."""
    make = _json_encoder.c_make_encoder
    if make is None:
        return json.JSONEncoder(
            separators=(item_separator, key_separator),
            sort_keys=sort_keys,
            default=default,
            ensure_ascii=False,
        ).encode
    encode = make(
        None,
        default,
        _json_encoder.encode_basestring,
        None,
        key_separator,
        item_separator,
        sort_keys,
        False,
        True,
    )
    return lambda value: "".join(encode(value, 0))
