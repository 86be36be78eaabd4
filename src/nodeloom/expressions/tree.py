"""The syntax tree the parser builds and the evaluator compiles: small frozen dataclasses.

Every node keeps `start`/`end`, offsets into the source text, so the evaluator can name
the path it was walking (`$json.a.b`) when a value is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

ROOTS = ("$json", "input", "$trigger", "$vars", "$loop", "$run", "$credentials")
"""Root names an expression may start from; `input` is another name for `$json`."""

ROOT_ALIASES = {"input": "$json"}
NODE_ROOT = "$"
"""The root name recorded in `roots` when an expression uses `$('Node name')`."""


@dataclass(frozen=True, slots=True)
class Node:
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: Any  # str, int, float, bool or None


@dataclass(frozen=True, slots=True)
class ArrayLiteral(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class ObjectLiteral(Node):
    entries: tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class Root(Node):
    name: str  # as written: one of ROOTS


@dataclass(frozen=True, slots=True)
class NodeJson(Node):
    """`$('ref').item.json`: the main output of another node."""

    ref: str


@dataclass(frozen=True, slots=True)
class NodeOutputs(Node):
    """`$('ref').outputs`: port -> value for each port of another node that fired."""

    ref: str


@dataclass(frozen=True, slots=True)
class Member(Node):
    target: Node
    name: str


@dataclass(frozen=True, slots=True)
class Index(Node):
    target: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # "!" (also written `not`) or "-"
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str  # + - * / % == != < <= > >= in "not in"
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Logical(Node):
    op: str  # "and" or "or"; both short-circuit and return the deciding operand
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Coalesce(Node):
    """`left ?? right` (and `default(left, right)`)."""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Conditional(Node):
    test: Node
    then: Node
    otherwise: Node


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Member):
        return (node.target,)
    if isinstance(node, Index):
        return (node.target, node.index)
    if isinstance(node, (Binary, Logical, Coalesce)):
        return (node.left, node.right)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, ArrayLiteral):
        return node.items
    if isinstance(node, ObjectLiteral):
        return tuple(value for _, value in node.entries)
    if isinstance(node, Conditional):
        return (node.test, node.then, node.otherwise)
    return ()


def walk(node: Node) -> Iterator[tuple[Node, int]]:
    """Every node of the tree with its depth (the root has depth 1), without recursion."""
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        yield current, depth
        stack.extend((child, depth + 1) for child in children(current))


def summary(node: Node) -> tuple[frozenset[str], frozenset[str]]:
    """(node references, root names) used anywhere in the tree; `input` counts as `$json`."""
    references: set[str] = set()
    roots: set[str] = set()
    for current, _ in walk(node):
        if isinstance(current, Root):
            roots.add(ROOT_ALIASES.get(current.name, current.name))
        elif isinstance(current, (NodeJson, NodeOutputs)):
            references.add(current.ref)
            roots.add(NODE_ROOT)
    return frozenset(references), frozenset(roots)
