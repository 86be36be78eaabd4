"""Turn expression text into tokens, each with its position in the text the user wrote.

Tokens are produced lazily, so the template splitter can lex its way to the `}}` that
closes an expression (a `}}` inside a string literal does not close it). Positions are
offsets into the whole text, so errors can point at a column of the field the user typed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from nodeloom.errors import ExpressionSyntaxError

TokenKind = Literal["number", "string", "name", "op", "end"]

_OPERATORS_2 = frozenset({"==", "!=", "<=", ">=", "&&", "||", "??", "?."})
_OPERATORS_1 = frozenset("+-*/%<>!?:.,()[]{}")
_MISTAKES = {
    "===": "use '==' (there is no '===': '==' never converts types)",
    "!==": "use '!=' (there is no '!==': '!=' never converts types)",
    "=": "use '==' to compare (there is no assignment)",
    "&": "use '&&' or 'and'",
    "|": "use '||' or 'or'",
}
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "/": "/",
    "\\": "\\",
    '"': '"',
    "'": "'",
}
_SNIPPET_LIMIT = 80
_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class Token:
    """One token. `start`/`end` are offsets into the whole source text."""

    kind: TokenKind
    text: str  # the source text of the token ("" for end)
    value: object  # the number, the decoded string, or the text itself
    start: int
    end: int

    def describe(self) -> str:
        return "end of expression" if self.kind == "end" else repr(self.text)


@dataclass(frozen=True, slots=True)
class Source:
    """The text being compiled and the span of it shown in error messages."""

    text: str
    snippet_start: int = 0
    snippet_end: int | None = None

    def error(self, message: str, pos: int, hint: str = "") -> ExpressionSyntaxError:
        """An ExpressionSyntaxError: `<message> at column N in <snippet>[; <hint>]`."""
        end = len(self.text) if self.snippet_end is None else self.snippet_end
        snippet = self.text[self.snippet_start : end].strip()
        if len(snippet) > _SNIPPET_LIMIT:
            snippet = snippet[: _SNIPPET_LIMIT - 3] + "..."
        shown = f" in {snippet}" if snippet else ""
        tail = f"; {hint}" if hint else ""
        return ExpressionSyntaxError(f"{message} at {self.where(pos)}{shown}{tail}")

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - self.text.rfind("\n", 0, pos)
        return f"column {column}" if "\n" not in self.text else f"line {line}, column {column}"


def tokens(source: Source, start: int = 0) -> Iterator[Token]:
    """Yield the tokens of `source.text` from offset `start`; the last one has kind 'end'.

    Stops at the end of the text. The caller may stop earlier (the template splitter stops
    at the closing `}}`).
    """
    text = source.text
    size = len(text)
    pos = start
    while True:
        while pos < size and text[pos] in " \t\r\n":
            pos += 1
        if pos >= size:
            yield Token("end", "", None, size, size)
            return
        char = text[pos]
        if char in _DIGITS:
            token = _number(source, pos)
        elif char in "'\"":
            token = _string(source, pos)
        elif char.isalpha() or char in "_$":
            end = pos + 1
            while end < size and (text[end].isalnum() or text[end] == "_"):
                end += 1
            token = Token("name", text[pos:end], text[pos:end], pos, end)
        else:
            token = _operator(source, pos)
        yield token
        pos = token.end


def _number(source: Source, pos: int) -> Token:
    text = source.text
    end = _digits(text, pos)
    is_float = False
    if end + 1 < len(text) and text[end] == "." and text[end + 1] in _DIGITS:
        end = _digits(text, end + 1)
        is_float = True
    if end < len(text) and text[end] in "eE":
        exponent = end + 1
        if exponent < len(text) and text[exponent] in "+-":
            exponent += 1
        if exponent < len(text) and text[exponent] in _DIGITS:
            end = _digits(text, exponent)
            is_float = True
    raw = text[pos:end]
    if end < len(text) and (text[end].isalpha() or text[end] == "_"):
        raise source.error(f"invalid number {text[pos : end + 1]!r}", pos)
    try:
        value: int | float = float(raw) if is_float else int(raw)
    except ValueError:  # more digits than Python converts
        raise source.error(f"number {raw[:20]}... is too long", pos) from None
    return Token("number", raw, value, pos, end)


def _digits(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _DIGITS:
        pos += 1
    return pos


def _string(source: Source, start: int) -> Token:
    text = source.text
    quote = text[start]
    parts: list[str] = []
    pos = start + 1
    close = text.find(quote, pos)
    while close >= 0:
        backslash = text.find("\\", pos, close)
        if backslash < 0:
            parts.append(text[pos:close])
            return Token("string", text[start : close + 1], "".join(parts), start, close + 1)
        parts.append(text[pos:backslash])
        char, pos = _escape(source, backslash)
        parts.append(char)
        if pos > close:  # the escape was the quote itself: look for the next one
            close = text.find(quote, pos)
    raise source.error(f"unterminated string (no closing {quote})", start)


def _escape(source: Source, backslash: int) -> tuple[str, int]:
    """Decode the escape at `backslash`; return the character and the offset after it."""
    text = source.text
    code = text[backslash + 1 : backslash + 2]
    if code in _ESCAPES:
        return _ESCAPES[code], backslash + 2
    if code != "u":
        shown = f"\\{code}" if code else "\\"
        raise source.error(f"unknown escape {shown!r}", backslash, "write '\\\\' for a backslash")
    unit = _hex4(source, backslash)
    after = backslash + 6
    if 0xD800 <= unit <= 0xDBFF and text[after : after + 2] == "\\u":
        low = _hex4(source, after)
        if 0xDC00 <= low <= 0xDFFF:
            return chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)), after + 6
    if 0xD800 <= unit <= 0xDFFF:
        raise source.error("invalid \\u escape: a lone surrogate", backslash)
    return chr(unit), after


def _hex4(source: Source, backslash: int) -> int:
    digits = source.text[backslash + 2 : backslash + 6]
    if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        raise source.error("invalid \\u escape", backslash, "write 4 hex digits, e.g. \\u00e9")
    return int(digits, 16)


def _operator(source: Source, pos: int) -> Token:
    text = source.text
    three = text[pos : pos + 3]
    if three in _MISTAKES:
        raise source.error(f"unexpected {three!r}", pos, _MISTAKES[three])
    two = text[pos : pos + 2]
    if two in _OPERATORS_2:
        return Token("op", two, two, pos, pos + 2)
    char = text[pos]
    if char in _OPERATORS_1:
        return Token("op", char, char, pos, pos + 1)
    if char in _MISTAKES:
        raise source.error(f"unexpected {char!r}", pos, _MISTAKES[char])
    raise source.error(f"unexpected character {char!r}", pos)
