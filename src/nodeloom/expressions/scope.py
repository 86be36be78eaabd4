"""What an expression can see: the `Scope` it is rendered in.

The engine implements `Scope` for a running node; `DictScope` is the simple implementation
for tests and for callers that already hold the values in dicts.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from nodeloom.errors import ExpressionEvalError


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing.MISSING
"""Marks a value that is not there, e.g. `NodeOutput.json` when the main port did not fire.

An enum member, so it stays itself through copy and pickle: test it with `is MISSING`.
"""


@dataclass(frozen=True, slots=True)
class NodeOutput:
    """What `$('name')` sees of another node.

    `json` is the value on its main output (MISSING if the main port did not fire);
    `outputs` maps each port that fired to its value.
    """

    name: str
    json: Any = MISSING
    outputs: Mapping[str, Any] = field(default_factory=dict)


class Scope(Protocol):
    """The names an expression is rendered against."""

    def lookup(self, name: str) -> Any:
        """The value of a root name: "$json", "$trigger", "$vars", "$loop" or "$run".

        Raise KeyError if the name is not available here. (The evaluator resolves `input`
        as "$json", so a scope never needs to answer "input" itself.)
        """
        ...

    def node(self, ref: str) -> NodeOutput:
        """The output of the node named (or with the id) `ref`, as written in $('ref').

        Raise ExpressionEvalError with a clear message if it is not available.
        """
        ...


class DictScope:
    """A Scope over plain dicts: `DictScope({"$json": {...}}, {"HTTP Request": NodeOutput(...)})`.

    `names` maps root names ("$json", "$vars", ...) to values; `nodes` maps the names used
    in $('...') to their NodeOutput.
    """

    __slots__ = ("_names", "_nodes")

    def __init__(
        self, names: Mapping[str, Any], nodes: Mapping[str, NodeOutput] | None = None
    ) -> None:
        self._names = dict(names)
        self._nodes = dict(nodes or {})

    def lookup(self, name: str) -> Any:
        return self._names[name]

    def node(self, ref: str) -> NodeOutput:
        try:
            return self._nodes[ref]
        except KeyError:
            known = ", ".join(repr(name) for name in sorted(self._nodes)) or "none"
            raise ExpressionEvalError(
                f"no node named {ref!r} has run before this one (nodes available: {known})"
            ) from None

    def __repr__(self) -> str:
        return f"DictScope(names={sorted(self._names)}, nodes={sorted(self._nodes)})"
