"""Parse expression tokens into a tree (precedence climbing), checking what can be checked
before anything runs: names, function argument counts, `$('Node name')` references.

Operators, lowest precedence first: `c ? a : b`; `??`; `||`/`or`; `&&`/`and`; `==` `!=`;
`<` `<=` `>` `>=` `in` `not in`; `+` `-`; `*` `/` `%`; unary `!` `not` `-`; then
`.field`, `[index]` and calls.
"""

from __future__ import annotations

import difflib

from nodeloom.errors import ExpressionSyntaxError
from nodeloom.expressions import tree
from nodeloom.expressions.functions import FUNCTIONS
from nodeloom.expressions.lexer import Source, Token, tokens
from nodeloom.expressions.tree import ROOTS, Node

MAX_NESTING = 64
"""Deepest nesting of brackets, parentheses and unary operators."""
MAX_TREE_DEPTH = 256
"""Deepest tree (long chains like a + b + c + ... count one level per operator)."""

_INFIX = {
    "?": 1,
    "??": 2,
    "||": 3,
    "or": 3,
    "&&": 4,
    "and": 4,
    "==": 5,
    "!=": 5,
    "<": 6,
    "<=": 6,
    ">": 6,
    ">=": 6,
    "in": 6,
    "not in": 6,
    "+": 7,
    "-": 7,
    "*": 8,
    "/": 8,
    "%": 8,
}
_UNARY = 9
_NAMED_OPERATORS = {"or": "or", "||": "or", "and": "and", "&&": "and"}
_CONSTANTS = {"true": True, "false": False, "null": None}
_NODE_HINT = "$() takes a node name in quotes, e.g. $('HTTP Request')"
_NAMES_AVAILABLE = "names available: " + ", ".join(ROOTS) + ", $('Node name')"


def parse(source: Source, toks: list[Token]) -> Node:
    """Parse `toks` (ending with an 'end' token) into a tree; raise ExpressionSyntaxError."""
    return _Parser(source, toks).parse()


def parse_text(text: str) -> Node:
    """Parse a whole text as one bare expression (no `{{ }}`)."""
    source = Source(text)
    return parse(source, list(tokens(source)))


class _Parser:
    def __init__(self, source: Source, toks: list[Token]) -> None:
        self.source = source
        self.toks = toks
        self.at = 0
        self.nesting = 0

    # -- tokens ---------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.toks[min(self.at + ahead, len(self.toks) - 1)]

    def advance(self) -> Token:
        token = self.toks[self.at]
        if token.kind != "end":
            self.at += 1
        return token

    def is_op(self, text: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == "op" and token.text == text

    def expect(self, text: str, opener: Token | None = None) -> Token:
        if self.is_op(text):
            return self.advance()
        found = self.peek()
        hint = (
            f"to close the {opener.text!r} at {self.source.where(opener.start)}" if opener else ""
        )
        raise self.error(f"expected {text!r} but found {found.describe()}", found, hint)

    def error(self, message: str, token: Token, hint: str = "") -> ExpressionSyntaxError:
        return self.source.error(message, token.start, hint)

    def unexpected(self, token: Token, hint: str = "") -> ExpressionSyntaxError:
        return self.error(f"unexpected {token.describe()}", token, hint)

    # -- grammar --------------------------------------------------------------------------

    def parse(self) -> Node:
        first = self.peek()
        if first.kind == "end":
            raise self.error("empty expression", first, "write something between {{ and }}")
        node = self.expression(0)
        if self.peek().kind != "end":
            raise self.unexpected(self.peek())
        if max(depth for _, depth in tree.walk(node)) > MAX_TREE_DEPTH:
            raise self.error(
                f"expression is too complex (more than {MAX_TREE_DEPTH} operations deep)",
                first,
                "split it into several smaller expressions",
            )
        return node

    def expression(self, min_power: int) -> Node:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.error(
                f"expression is nested too deeply (over {MAX_NESTING} levels)", self.peek()
            )
        left = self.prefix()
        while True:
            op = self.infix_operator()
            if op is None or _INFIX[op] <= min_power:
                break
            token = self.advance()
            if op == "not in":
                self.advance()
            left = self.infix(op, token, left)
        self.nesting -= 1
        return left

    def infix_operator(self) -> str | None:
        token = self.peek()
        if token.kind == "op" and token.text in _INFIX:
            return token.text
        if token.kind == "name" and token.text in ("or", "and", "in"):
            return token.text
        if token.kind == "name" and token.text == "not":
            after = self.peek(1)
            if after.kind == "name" and after.text == "in":
                return "not in"
        return None

    def infix(self, op: str, token: Token, left: Node) -> Node:
        power = _INFIX[op]
        if op == "?":
            then = self.expression(0)
            self.expect(":", token)
            otherwise = self.expression(power - 1)
            return tree.Conditional(left.start, otherwise.end, left, then, otherwise)
        right = self.expression(power)
        if op == "??":
            return tree.Coalesce(left.start, right.end, left, right)
        if op in _NAMED_OPERATORS:
            return tree.Logical(left.start, right.end, _NAMED_OPERATORS[op], left, right)
        following = self.infix_operator()
        if power in (5, 6) and following is not None and _INFIX[following] == power:
            raise self.error(
                f"cannot chain {op!r} and {following!r}",
                self.peek(),
                "write each comparison on its own and join them, e.g. a < b and b < c",
            )
        return tree.Binary(left.start, right.end, op, left, right)

    def prefix(self) -> Node:
        token = self.peek()
        if (token.kind == "op" and token.text in ("!", "-")) or (
            token.kind == "name" and token.text == "not"
        ):
            self.advance()
            operand = self.expression(_UNARY)
            op = "-" if token.text == "-" else "!"
            if op == "-" and isinstance(operand, tree.Literal) and _is_number(operand.value):
                return tree.Literal(token.start, operand.end, -operand.value)
            return tree.Unary(token.start, operand.end, op, operand)
        return self.postfix(self.primary())

    def primary(self) -> Node:
        token = self.advance()
        if token.kind in ("number", "string"):
            return tree.Literal(token.start, token.end, token.value)
        if token.kind == "op":
            if token.text == "(":
                inner = self.expression(0)
                self.expect(")", token)
                return inner
            if token.text == "[":
                return self.array(token)
            if token.text == "{":
                return self.object(token)
            raise self.unexpected(token)
        if token.kind == "end":
            raise self.unexpected(token)
        name = token.text
        if name in ("and", "or", "in"):
            raise self.unexpected(token)
        if name in _CONSTANTS:
            return tree.Literal(token.start, token.end, _CONSTANTS[name])
        if name == tree.NODE_ROOT:
            return self.node_reference(token)
        if name in ROOTS:
            return tree.Root(token.start, token.end, name)
        if name in FUNCTIONS:
            return self.call(token)
        raise self.unknown_name(token)

    def postfix(self, node: Node) -> Node:
        while True:
            token = self.peek()
            if token.kind != "op":
                return node
            if token.text == ".":
                self.advance()
                field = self.advance()
                if field.kind != "name":
                    hint = "use [0] for list indexes" if field.kind == "number" else ""
                    raise self.error(
                        f"expected a field name after '.' but found {field.describe()}", field, hint
                    )
                node = tree.Member(node.start, field.end, node, field.text)
            elif token.text == "[":
                self.advance()
                index = self.expression(0)
                close = self.expect("]", token)
                node = tree.Index(node.start, close.end, node, index)
            elif token.text == "(":
                raise self.error(
                    "only functions can be called", token, _call_hint(self.source, node)
                )
            elif token.text == "?.":
                raise self.error(
                    "'?.' is not supported",
                    token,
                    "write the full path and a fallback instead, e.g. $json.a.b ?? 'none'",
                )
            else:
                return node

    def array(self, opener: Token) -> Node:
        items = self.sequence("]", opener)
        return tree.ArrayLiteral(opener.start, self.toks[self.at - 1].end, tuple(items))

    def object(self, opener: Token) -> Node:
        entries: list[tuple[str, Node]] = []
        while not self.is_op("}"):
            key = self.advance()
            if key.kind not in ("name", "string"):
                raise self.error(
                    f"expected a field name but found {key.describe()}",
                    key,
                    'object keys are names or strings in quotes, e.g. {name: 1, "full name": 2}',
                )
            self.expect(":")
            entries.append((str(key.value), self.expression(0)))
            self.separator("}", opener)
        close = self.advance()
        return tree.ObjectLiteral(opener.start, close.end, tuple(entries))

    def sequence(self, closer: str, opener: Token) -> list[Node]:
        """Comma-separated expressions up to `closer` (consumed); a trailing comma is fine."""
        items: list[Node] = []
        while not self.is_op(closer):
            items.append(self.expression(0))
            self.separator(closer, opener)
        self.advance()
        return items

    def separator(self, closer: str, opener: Token) -> None:
        """After an item: consume a ',' or stop before `closer`; anything else is an error."""
        if self.is_op(","):
            self.advance()
        elif not self.is_op(closer):
            found = self.peek()
            raise self.error(
                f"expected ',' or {closer!r} but found {found.describe()}",
                found,
                f"the {opener.text!r} at {self.source.where(opener.start)} is still open",
            )

    def call(self, name_token: Token) -> Node:
        name = name_token.text
        function = FUNCTIONS[name]
        if not self.is_op("("):
            hint = f"did you mean ${name}?" if f"${name}" in ROOTS else f"e.g. {function.usage}"
            raise self.error(f"{name!r} is a function: call it with ()", name_token, hint)
        opener = self.advance()
        args = self.sequence(")", opener)
        end = self.toks[self.at - 1].end
        count = len(args)
        low, high = function.min_args, function.max_args
        if count < low or (high is not None and count > high):
            raise self.error(
                f"{name}() takes {_arity(low, high)}, got {count}",
                name_token,
                f"usage: {function.usage}",
            )
        if name == "default":
            return tree.Coalesce(name_token.start, end, args[0], args[1])
        return tree.Call(name_token.start, end, name, tuple(args))

    def node_reference(self, dollar: Token) -> Node:
        if not (self.is_op("(") and self.peek(1).kind == "string" and self.is_op(")", 2)):
            raise self.error("invalid node reference", dollar, _NODE_HINT)
        self.advance()
        ref = str(self.advance().value)
        self.advance()
        shown = f"$({ref!r})"
        if self.member_follows("outputs"):
            self.advance()
            return tree.NodeOutputs(dollar.start, self.advance().end, ref)
        if self.member_follows("item"):
            self.advance()
            self.advance()
            if self.member_follows("json"):
                self.advance()
                return tree.NodeJson(dollar.start, self.advance().end, ref)
            raise self.error(
                f"expected .json after {shown}.item", self.peek(), f"e.g. {shown}.item.json.id"
            )
        raise self.error(
            f"expected .item.json or .outputs after {shown}",
            self.peek(),
            f"{shown}.item.json is the node's output, {shown}.outputs the ports that fired",
        )

    def member_follows(self, name: str) -> bool:
        field = self.peek(1)
        return self.is_op(".") and field.kind == "name" and field.text == name

    def unknown_name(self, token: Token) -> ExpressionSyntaxError:
        name = token.text
        if self.is_op("("):
            close = difflib.get_close_matches(name, list(FUNCTIONS), n=1)
            guess = f"did you mean {close[0]}()? " if close else ""
            return self.error(
                f"unknown function {name!r}",
                token,
                f"{guess}functions available: {', '.join(sorted(FUNCTIONS))}",
            )
        close = difflib.get_close_matches(name, [*ROOTS, *FUNCTIONS], n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        if name == "$node":
            guess = "write $('Node name').item.json to read another node's output; "
        return self.error(f"unknown name {name!r}", token, f"{guess}{_NAMES_AVAILABLE}")


def _arity(low: int, high: int | None) -> str:
    """`1 argument`, `1 to 2 arguments`, `at least 1 argument`."""
    if high is None:
        counted = f"at least {low}"
    elif low == high:
        counted = str(low)
    else:
        counted = f"{low} to {high}"
    return f"{counted} argument" if counted in ("1", "at least 1") else f"{counted} arguments"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _call_hint(source: Source, node: Node) -> str:
    if isinstance(node, tree.Member) and node.name in FUNCTIONS:
        target = " ".join(source.text[node.target.start : node.target.end].split())
        return f"there are no methods: write {node.name}({target})"
    return "there are no methods; call functions by name, e.g. lower($json.name)"
