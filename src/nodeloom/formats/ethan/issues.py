"""Located issues for the Ethan loader: pydantic errors made into `Issue`s whose `field` is
the path in the file (`graph.nodes[2].map.set`) and whose message says what was received.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel

from nodeloom.errors import Issue


def from_validation(error: Any, where: str, model: type[BaseModel], node_id: str | None) -> Issue:
    """One pydantic error as an Issue: `unknown_field` (with a did-you-mean) for an unknown
    key, `invalid_graph` for the rest, located at `where` and the error's path."""
    loc = error["loc"]
    path = _path(where, loc)
    kind = error["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        valid = _fields(owner) if owner is not None else ()
        parent = _path(where, loc[:-1])
        return unknown_field(str(loc[-1]), parent, valid, node_id)
    if kind == "missing":
        return Issue(
            "invalid_graph", f"missing required field '{loc[-1]}'", node_id=node_id, field=path
        )
    message = str(error["msg"]).removeprefix("Value error, ")
    if "input" in error and kind not in ("value_error", "assertion_error"):
        message += f"; got {_shown(error['input'])}"
    return Issue("invalid_graph", message, node_id=node_id, field=path)


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the field at `loc` (best effort, for did-you-means)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            current = _inner(current)
            if isinstance(part, int):
                continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        info = current.model_fields.get(part) or next(
            (f for f in current.model_fields.values() if f.alias == part), None
        )
        if info is None:
            return None
        current = _inner(info.annotation)
    current = _inner(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner(annotation: Any) -> Any:
    """The model class inside `X | None`, `list[X]`, `dict[str, X]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()) or ():
        found = _inner(argument)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def _fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(info.alias or name for name, info in model.model_fields.items())


def unknown_field(key: str, parent: str, valid: tuple[str, ...], node_id: str | None) -> Issue:
    hint = difflib.get_close_matches(key, list(valid), n=1)
    suggestion = f"did you mean '{hint[0]}'? " if hint else ""
    listed = f"valid fields: {', '.join(valid)}" if valid else ""
    return Issue(
        "unknown_field",
        f"unknown field '{key}'; {suggestion}{listed}".rstrip("; "),
        node_id=node_id,
        field=f"{parent}.{key}" if parent else key,
    )


def wrong_type(where: str, expected: str, value: Any, node_id: str | None) -> Issue:
    return Issue(
        "invalid_graph", f"must be {expected}; got {_shown(value)}", node_id=node_id, field=where
    )


def _path(where: str, loc: tuple[Any, ...]) -> str:
    text = where
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _shown(value: Any) -> str:
    kind = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
    if isinstance(value, dict | list) or value is None:
        return kind
    text = repr(value)
    return f"{kind} {text if len(text) <= 60 else text[:59] + '…'}"


__all__ = ["from_validation", "unknown_field", "wrong_type"]
