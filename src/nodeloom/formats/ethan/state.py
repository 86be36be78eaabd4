"""State updates: `map` (set → merge → delete) and the deep merge they and subgraphs use.

The rules, exactly:

- **Rendering first.** Every template of `set`, `merge` and `delete` is rendered against
  the state as it was before the map, then the three are applied in that order.
- **Paths.** A key is a path: `answer.text` is the key `text` of the object `answer`.
  `set` and `merge` create missing objects on the way; crossing a value that is not an
  object is an error (`map_error`). `delete` removes the key if it is there.
- **set** replaces the value at the path.
- **merge** deep-merges the value into the one at the path (`deep_merge`):
  objects merge key by key, recursively; lists concatenate, but an item of the incoming
  list that is equal to an item the target list already had is not added again (items
  repeated inside the incoming list are kept); `null` incoming keeps the target; anything
  else (or two values of different kinds) replaces the target.

A subgraph's final state is merged back into its parent's with the same `deep_merge`, so
lists the parent already had are not duplicated.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.values import kind_of


class MapError(NodeError):
    """A map could not be applied (a path crosses a value that is not an object)."""

    code = "map_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def deep_merge(target: Any, incoming: Any) -> Any:
    """A new value: `incoming` merged into `target` (neither is changed)."""
    if incoming is None:
        return copy.deepcopy(target)
    if isinstance(target, dict) and isinstance(incoming, dict):
        merged = {key: copy.deepcopy(value) for key, value in target.items()}
        for key, value in incoming.items():
            merged[key] = deep_merge(merged[key], value) if key in merged else copy.deepcopy(value)
        return merged
    if isinstance(target, list) and isinstance(incoming, list):
        added = [copy.deepcopy(item) for item in incoming if not _contains(target, item)]
        return [*copy.deepcopy(target), *added]
    return copy.deepcopy(incoming)


def _contains(items: list[Any], value: Any) -> bool:
    return any(same(item, value) for item in items)


def same(a: Any, b: Any) -> bool:
    """JSON equality: `1` and `true` differ, `1` and `1.0` do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def apply_map(
    state: dict[str, Any],
    *,
    set_values: Mapping[str, Any],
    merge_values: Mapping[str, Any],
    delete_paths: list[Any],
) -> None:
    """Apply already-rendered directives to `state`, in place: set, then merge, then
    delete."""
    for path, value in set_values.items():
        parent, key = _parent(state, path, create=True)
        parent[key] = copy.deepcopy(value)
    for path, value in merge_values.items():
        parent, key = _parent(state, path, create=True)
        parent[key] = deep_merge(parent.get(key), value)
    for path in delete_paths:
        if not isinstance(path, str):
            raise MapError(f"map.delete: {path!r} is not a key; write the key's name or path")
        try:
            parent, key = _parent(state, path, create=False)
        except KeyError:
            continue
        parent.pop(key, None)


def _parent(state: dict[str, Any], path: str, *, create: bool) -> tuple[dict[str, Any], str]:
    """The object holding the last part of `path`, and that part."""
    parts = path.split(".")
    current = state
    for index, part in enumerate(parts[:-1]):
        value = current.get(part)
        if value is None:
            if not create:
                raise KeyError(path)
            value = current[part] = {}
        elif not isinstance(value, dict):
            if not create:
                raise KeyError(path)
            crossed = ".".join(parts[: index + 1])
            raise MapError(
                f"map: cannot reach '{path}': '{crossed}' is {kind_of(value)}, not an object"
            )
        current = value
    return current, parts[-1]


__all__ = ["MapError", "apply_map", "deep_merge", "same"]
