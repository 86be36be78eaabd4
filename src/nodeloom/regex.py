"""User regular expressions, compiled by RE2 so that matching takes linear time.

A pattern written in a workflow (a `regex` condition, a JSONata `/regex/`) is matched
against text that may come from outside (a webhook payload). Python's `re` backtracks, and
a pattern such as `(a+)+$` against `'a' * 40 + '!'` runs for hours on the event loop,
where no node or run timeout can stop it. RE2 (google-re2) guarantees time linear in the
text, so every user pattern goes through `compile_pattern`.

RE2 has no backreferences (`\\1`) and no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`): such
a pattern is refused with `PatternError`, whose message says what RE2 rejected and how to
rewrite it; callers turn it into a node error naming the node and parameter.
"""

from __future__ import annotations

import re
from typing import Any

import re2

_UNSUPPORTED_HINT = (
    "Patterns run on RE2, which matches in linear time and so has no backreferences "
    "(\\1) or lookaround ((?=, (?!, (?<=, (?<!); rewrite the pattern without them (a "
    "lookahead often becomes a second condition or a second match)."
)


class PatternError(ValueError):
    """A pattern RE2 cannot compile; `reason` is RE2's own words."""

    def __init__(self, pattern: str, reason: str) -> None:
        self.pattern = pattern
        self.reason = reason
        self.unsupported = _python_accepts(pattern)
        super().__init__(f"{reason}. {_UNSUPPORTED_HINT}" if self.unsupported else f"{reason}.")


def _python_accepts(pattern: str) -> bool:
    """Whether Python's `re` compiles the pattern (compiling never backtracks): then RE2
    refused a feature it lacks, not a typo."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def compile_pattern(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> Any:
    """`pattern` compiled by RE2 (an object with `search`, `finditer`, `sub`, `split`, ...
    like `re.Pattern`); raises `PatternError` when RE2 refuses it."""
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.case_sensitive = not ignore_case
    options.never_nl = False
    flags = "(?m)" if multiline else ""
    try:
        return re2.compile(flags + pattern, options)
    except re2.error as error:
        raise PatternError(pattern, _reason(error)) from None


def _reason(error: Exception) -> str:
    reason = error.args[0] if error.args else str(error)
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    return str(reason)


__all__ = ["PatternError", "compile_pattern"]
