"""Compile a syntax tree once into nested Python closures, then run them against a Scope.

Nothing here evaluates Python code or reads Python attributes: the closures only walk
dicts, lists, strings, numbers, booleans and null, and call the whitelisted functions.
A missing field, index or node output raises `MissingValueError`, which `??` catches.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from nodeloom.errors import ExpressionEvalError
from nodeloom.expressions import operators, tree
from nodeloom.expressions.functions import FUNCTIONS
from nodeloom.expressions.scope import MISSING, NodeOutput, Scope
from nodeloom.expressions.values import a_kind, describe, preview

Evaluator = Callable[[Scope], Any]

_PATH_LIMIT = 60
_FIELDS_SHOWN = 20
_ROOT_HINTS = {
    "$loop": "$loop exists only inside a Loop body",
    "$trigger": "$trigger holds what started the run",
}


class MissingValueError(ExpressionEvalError):
    """A field, index or node output that is not there. `a ?? b` falls back to `b` on it.

    The message may be given as a function, run only when the message is read, so that
    `$json.field ?? fallback` does not pay for a "did you mean" search it never shows.
    """

    def __init__(self, message: str | Callable[[], str]) -> None:
        super().__init__(message)

    def __str__(self) -> str:
        message = self.args[0]
        if callable(message):
            message = message()
            self.args = (message,)
        return str(message)

    def __reduce__(self) -> tuple[type[MissingValueError], tuple[str]]:
        return (type(self), (str(self),))


class Expression:
    """One compiled expression: `evaluate(scope)` returns its value with its native type."""

    __slots__ = ("_run", "references", "roots", "source", "uses_input")

    def __init__(self, source: str, syntax: tree.Node, text: str | None = None) -> None:
        self.source = source
        self.references, self.roots = tree.summary(syntax)
        self.uses_input = "$json" in self.roots
        self._run = compile_tree(syntax, source if text is None else text)

    def evaluate(self, scope: Scope) -> Any:
        try:
            return self._run(scope)
        except RecursionError:
            raise ExpressionEvalError("a value is nested too deeply to evaluate") from None

    render = evaluate

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


def compile_tree(node: tree.Node, text: str) -> Evaluator:
    """Turn `node` into a function of the scope; `text` is the source the node spans index."""
    compiler = _COMPILERS[type(node)]
    return compiler(node, text)


def _path(node: tree.Node, text: str) -> str:
    """How the user wrote `node`, for messages: `$json.items[0]`."""
    written = " ".join(text[node.start : node.end].split())
    return written if len(written) <= _PATH_LIMIT else written[: _PATH_LIMIT - 3] + "..."


# -- values -----------------------------------------------------------------------------


def _literal(node: tree.Literal, text: str) -> Evaluator:
    value = node.value
    return lambda scope: value


def _array(node: tree.ArrayLiteral, text: str) -> Evaluator:
    items = [compile_tree(item, text) for item in node.items]
    return lambda scope: [item(scope) for item in items]


def _object(node: tree.ObjectLiteral, text: str) -> Evaluator:
    entries = [(key, compile_tree(value, text)) for key, value in node.entries]
    return lambda scope: {key: value(scope) for key, value in entries}


def _root(node: tree.Root, text: str) -> Evaluator:
    written = node.name
    name = tree.ROOT_ALIASES.get(written, written)

    def root(scope: Scope) -> Any:
        try:
            value = scope.lookup(name)
        except KeyError:
            raise _unavailable(scope, written) from None
        if value is MISSING:
            raise MissingValueError(f"{written} has no value here")
        return value

    return root


def _unavailable(scope: Scope, name: str) -> MissingValueError:
    available = []
    for root in tree.ROOTS:
        try:
            scope.lookup(tree.ROOT_ALIASES.get(root, root))
        except KeyError:
            continue
        available.append(root)
    listed = ", ".join(available) if available else "none"
    hint = f"; {_ROOT_HINTS[name]}" if name in _ROOT_HINTS else ""
    return MissingValueError(f"{name} is not available here (available: {listed}){hint}")


def _node_output(scope: Scope, ref: str) -> NodeOutput:
    """The scope's output of node `ref`; a node that has not run counts as missing."""
    try:
        return scope.node(ref)
    except MissingValueError:
        raise
    except ExpressionEvalError as exc:
        raise MissingValueError(str(exc)) from None
    except KeyError:
        raise MissingValueError(f"no node named {ref!r} is available here") from None


def _node_json(node: tree.NodeJson, text: str) -> Evaluator:
    ref = node.ref

    def node_json(scope: Scope) -> Any:
        value = _node_output(scope, ref).json
        if value is MISSING:
            raise MissingValueError(f"node {ref!r} produced no value on its main output")
        return value

    return node_json


def _node_outputs(node: tree.NodeOutputs, text: str) -> Evaluator:
    ref = node.ref
    return lambda scope: dict(_node_output(scope, ref).outputs)


# -- member and index -------------------------------------------------------------------


def _member(node: tree.Member, text: str) -> Evaluator:
    target = compile_tree(node.target, text)
    name = node.name
    where = _path(node.target, text)

    def member(scope: Scope) -> Any:
        value = target(scope)
        if type(value) is dict and name in value:
            return value[name]
        return _read_field(value, name, where)

    return member


def _read_field(value: Any, name: str, where: str) -> Any:
    if isinstance(value, Mapping):
        if name in value:
            return value[name]
        raise _field_not_found(value, name, where)
    if isinstance(value, (str, list, tuple)):
        if name == "length":
            return len(value)
        hint = "strings and arrays only have .length"
        if not isinstance(value, str):
            hint += f"; to read a field of an item use an index, e.g. {where}[0].{name}"
        raise ExpressionEvalError(
            f"cannot read field {name!r} of {a_kind(value)} ({where} is {preview(value)}); " + hint
        )
    if value is None:
        raise MissingValueError(f"cannot read field {name!r} of null ({where} is null)")
    raise ExpressionEvalError(
        f"cannot read field {name!r} of {a_kind(value)} ({where} is {preview(value)})"
    )


def _field_not_found(value: Mapping[Any, Any], name: str, where: str) -> MissingValueError:
    fields = [str(key) for key in value]

    def message() -> str:
        if not fields:
            return f"field {name!r} not found in {where} (it has no fields)"
        shown = ", ".join(fields[:_FIELDS_SHOWN])
        if len(fields) > _FIELDS_SHOWN:
            shown += f", ... ({len(fields) - _FIELDS_SHOWN} more)"
        close = difflib.get_close_matches(name, fields, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        return f"field {name!r} not found in {where} (available fields: {shown}){guess}"

    return MissingValueError(message)


def _index(node: tree.Index, text: str) -> Evaluator:
    target = compile_tree(node.target, text)
    index = compile_tree(node.index, text)
    where = _path(node.target, text)

    def read(scope: Scope) -> Any:
        value = target(scope)
        key = index(scope)
        if type(value) is list and type(key) is int and -len(value) <= key < len(value):
            return value[key]
        return _read_index(value, key, where)

    return read


def _read_index(value: Any, key: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        if not isinstance(key, str):
            raise ExpressionEvalError(
                f"cannot look up {describe(key)} in the object {where}; "
                f"fields are looked up by name, e.g. {where}['{preview(key)}']"
            )
        if key in value:
            return value[key]
        raise _field_not_found(value, key, where)
    if isinstance(value, (list, tuple)):
        if isinstance(key, float) and key.is_integer():
            key = int(key)
        if not isinstance(key, int) or isinstance(key, bool):
            raise ExpressionEvalError(
                f"an index into the array {where} must be a whole number, got {describe(key)}"
            )
        if -len(value) <= key < len(value):
            return value[key]
        raise MissingValueError(f"index {key} out of range for {where} (length {len(value)})")
    if value is None:
        raise MissingValueError(f"cannot read [{preview(key)}] of null ({where} is null)")
    hint = "; use slice(text, start, end) for part of a string" if isinstance(value, str) else ""
    raise ExpressionEvalError(
        f"cannot read [{preview(key)}] of {a_kind(value)} ({where} is {preview(value)})" + hint
    )


# -- calls and operators ----------------------------------------------------------------


def _call(node: tree.Call, text: str) -> Evaluator:
    function = FUNCTIONS[node.name].call
    args = [compile_tree(arg, text) for arg in node.args]
    if not args:
        return lambda scope: function()
    if len(args) == 1:
        (only,) = args
        return lambda scope: function(only(scope))
    return lambda scope: function(*[arg(scope) for arg in args])


def _unary(node: tree.Unary, text: str) -> Evaluator:
    operand = compile_tree(node.operand, text)
    if node.op == "!":
        return lambda scope: not operand(scope)
    negate = operators.negate
    return lambda scope: negate(operand(scope))


def _binary(node: tree.Binary, text: str) -> Evaluator:
    apply = operators.BINARY[node.op]
    left = compile_tree(node.left, text)
    right = compile_tree(node.right, text)
    return lambda scope: apply(left(scope), right(scope))


def _logical(node: tree.Logical, text: str) -> Evaluator:
    left = compile_tree(node.left, text)
    right = compile_tree(node.right, text)
    if node.op == "and":
        return lambda scope: left(scope) and right(scope)
    return lambda scope: left(scope) or right(scope)


def _coalesce(node: tree.Coalesce, text: str) -> Evaluator:
    left = compile_tree(node.left, text)
    right = compile_tree(node.right, text)

    def coalesce(scope: Scope) -> Any:
        try:
            value = left(scope)
        except MissingValueError:
            return right(scope)
        return right(scope) if value is None else value

    return coalesce


def _conditional(node: tree.Conditional, text: str) -> Evaluator:
    test = compile_tree(node.test, text)
    then = compile_tree(node.then, text)
    otherwise = compile_tree(node.otherwise, text)
    return lambda scope: then(scope) if test(scope) else otherwise(scope)


_COMPILERS: dict[type[tree.Node], Callable[[Any, str], Evaluator]] = {
    tree.Literal: _literal,
    tree.ArrayLiteral: _array,
    tree.ObjectLiteral: _object,
    tree.Root: _root,
    tree.NodeJson: _node_json,
    tree.NodeOutputs: _node_outputs,
    tree.Member: _member,
    tree.Index: _index,
    tree.Call: _call,
    tree.Unary: _unary,
    tree.Binary: _binary,
    tree.Logical: _logical,
    tree.Coalesce: _coalesce,
    tree.Conditional: _conditional,
}
