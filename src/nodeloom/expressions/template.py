"""Templates: text with `{{ ... }}` expressions in it, compiled once and rendered many times.

`"Hello {{ $json.name }}"` renders to text; a template that is exactly one expression
(`"{{ $json.items }}"`, surrounding whitespace allowed) renders to the value itself, with
its native type. The `}}` that closes an expression is found with the lexer, so a `}}`
inside a string literal does not close it.
"""

from __future__ import annotations

import functools
from typing import Any

from nodeloom.errors import ExpressionSyntaxError
from nodeloom.expressions.evaluate import Expression
from nodeloom.expressions.lexer import Source, Token, tokens
from nodeloom.expressions.parser import parse, parse_text
from nodeloom.expressions.scope import Scope
from nodeloom.expressions.values import to_text

MAX_TEMPLATE_LENGTH = 100_000
"""The longest text with expressions in it that compile_template accepts."""

_OPEN = "{{"
_LITERAL_BRACES_HINT = "to write literal braces use {{ '{{' }}"


def has_expression(text: str) -> bool:
    """Whether `text` contains a `{{` (and so must be compiled before use)."""
    return _OPEN in text


class Template:
    """A compiled template. Build it with `compile_template(text)`."""

    __slots__ = ("_parts", "_single", "is_single", "references", "roots", "source", "uses_input")

    def __init__(self, source: str, parts: list[str | Expression]) -> None:
        expressions = [part for part in parts if isinstance(part, Expression)]
        self.source = source
        self._parts = parts
        self.is_single = len(expressions) == 1 and all(
            isinstance(part, Expression) or not part.strip() for part in parts
        )
        self._single = expressions[0] if self.is_single else None
        self.references = frozenset().union(*(e.references for e in expressions))
        self.roots = frozenset().union(*(e.roots for e in expressions))
        self.uses_input = any(e.uses_input for e in expressions)

    @property
    def expressions(self) -> tuple[Expression, ...]:
        return tuple(part for part in self._parts if isinstance(part, Expression))

    def render(self, scope: Scope) -> Any:
        """The value (single expression) or the text, with each expression's value in it."""
        if self._single is not None:
            return self._single.evaluate(scope)
        pieces = []
        for part in self._parts:
            pieces.append(part if isinstance(part, str) else to_text(part.evaluate(scope)))
        return "".join(pieces)

    def __repr__(self) -> str:
        return f"Template({self.source!r})"


@functools.lru_cache(maxsize=1024)
def compile_template(text: str) -> Template:
    """Compile `text`; raise ExpressionSyntaxError (with a column) if an expression is bad.

    Compiled templates are immutable and cached, so compiling the same text again is cheap.
    """
    if _OPEN not in text:
        return Template(text, [text] if text else [])
    if len(text) > MAX_TEMPLATE_LENGTH:
        raise ExpressionSyntaxError(
            f"text with expressions is too long ({len(text):,} characters; "
            f"the limit is {MAX_TEMPLATE_LENGTH:,})"
        )
    parts: list[str | Expression] = []
    pos = 0
    while (start := text.find(_OPEN, pos)) >= 0:
        if start > pos:
            parts.append(text[pos:start])
        toks, close = _lex_expression(text, start)
        source = Source(text, start, close + 2)
        parts.append(Expression(text[start : close + 2], parse(source, toks), text))
        pos = close + 2
    if pos < len(text):
        parts.append(text[pos:])
    return Template(text, parts)


@functools.lru_cache(maxsize=1024)
def compile_expression(source: str) -> Expression:
    """Compile a bare expression such as `$json.total > 100` (no `{{ }}` needed).

    A text that is exactly one `{{ expression }}` is accepted too.
    """
    if len(source) > MAX_TEMPLATE_LENGTH:
        raise ExpressionSyntaxError(
            f"expression is too long ({len(source):,} characters; "
            f"the limit is {MAX_TEMPLATE_LENGTH:,})"
        )
    if source.lstrip().startswith(_OPEN):
        template = compile_template(source)
        if template._single is None:
            raise ExpressionSyntaxError(
                f"expected one expression, got text with {len(template.expressions)} "
                f"{{{{ }}}} expressions in it: {source[:80]}"
            )
        return template._single
    return Expression(source, parse_text(source))


def _lex_expression(text: str, start: int) -> tuple[list[Token], int]:
    """Tokens of the expression opened by the `{{` at `start`, up to its closing `}}`.

    Returns the tokens (ending with an 'end' token) and the offset of the closing `}}`.
    Braces of object literals nest: `{{ {"a": {"b": 1}} }}` closes at the last `}}`.
    """
    source = Source(text, start)
    stream = tokens(source, start + len(_OPEN))
    found: list[Token] = []
    depth = 0
    while (token := next(stream)).kind != "end":
        if token.kind == "op" and token.text == "{":
            depth += 1
        elif token.kind == "op" and token.text == "}":
            if depth == 0 and text.startswith("}", token.end):
                found.append(Token("end", "", None, token.start, token.start))
                return found, token.start
            depth = max(depth - 1, 0)
        found.append(token)
    hint = "close it with }}"
    if any(token.kind == "op" and token.text == "{" for token in found):
        hint += "; check that every { in it has its }"
    raise source.error("unclosed '{{'", start, f"{hint}; {_LITERAL_BRACES_HINT}")
