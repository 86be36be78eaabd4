"""The preamble Read File and Write File share: their choice parameter (`as`, `mode`)
checked against its values, and their `path` checked to stay under the files root, both
before any thread is taken or file opened."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.files.paths import split


@dataclass(frozen=True, slots=True)
class FileTarget:
    """A checked `path` (as given, and its parts) and the node's choice."""

    path: str
    parts: list[str]
    choice: str


def file_target(
    data: Mapping[str, Any], node: str, field: str, choices: Sequence[str], default: str
) -> FileTarget:
    """`data`'s `path` and its `field` choice, checked; raises `invalid_parameter` for a
    choice that is not one of `choices`, `path_outside_root` for a path that could leave
    the root. `node` names the node in the message (e.g. "Read File")."""
    choice = data.get(field) or default
    if choice not in choices:
        raise NodeError(
            f"{node} `{field}` must be one of {', '.join(choices)}; got {choice!r}.",
            code="invalid_parameter",
            retryable=False,
            details={"field": field},
        )
    path = data.get("path")
    parts = split(path)
    return FileTarget(path, parts, choice)
