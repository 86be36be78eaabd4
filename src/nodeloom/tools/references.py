"""Function references: how a Toolset names a Python function it hands to an agent.

    package.module:function     a module on the import path (the working directory included)
    package.module#function     the same
    path/to/file.py#function    a file, relative to the working directory or absolute

`parse_reference` only reads the text (no import), so the definition's check can use it;
the executor imports what it names.
"""

from __future__ import annotations

from dataclasses import dataclass

EXAMPLES = "'package.module:function' or 'path/to/file.py#function'"


class ReferenceSyntaxError(ValueError):
    """A reference that does not parse; the message says what is wrong and shows the forms."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed reference: a module name or a file path, and a dotted attribute path."""

    text: str
    module: str | None  # dotted module name, or None for a file
    path: str | None  # file path as written, or None for a module
    attribute: str  # "function" or "Class.method"


def parse_reference(text: object) -> Reference:
    """The parts of `text`; ReferenceSyntaxError if it is not a valid reference."""
    if not isinstance(text, str):
        raise ReferenceSyntaxError(
            f"a function reference must be text such as {EXAMPLES}, not {type(text).__name__}"
        )
    stripped = text.strip()
    if not stripped:
        raise ReferenceSyntaxError(f"a function reference is empty; write {EXAMPLES}")
    if "#" in stripped:
        target, attribute = (part.strip() for part in stripped.rsplit("#", 1))
        is_file = target.endswith(".py") or "/" in target or "\\" in target
    elif ":" in stripped:
        target, attribute = (part.strip() for part in stripped.split(":", 1))
        is_file = False
    else:
        raise ReferenceSyntaxError(
            f"{text!r} names no function: write {EXAMPLES} (the function comes after ':' or '#')"
        )
    if not target:
        raise ReferenceSyntaxError(f"{text!r} names no module or file before the function")
    if not _is_dotted_name(attribute):
        raise ReferenceSyntaxError(
            f"{text!r}: {attribute!r} is not a Python name; after ':' or '#' comes the "
            "function's name, e.g. 'word_count' or 'Tools.search'"
        )
    if is_file:
        if not target.endswith(".py"):
            raise ReferenceSyntaxError(
                f"{text!r}: {target!r} looks like a path but is not a .py file"
            )
        return Reference(text=stripped, module=None, path=target, attribute=attribute)
    if not _is_dotted_name(target):
        raise ReferenceSyntaxError(
            f"{text!r}: {target!r} is not a module name such as 'package.module' "
            "(a file is written 'path/to/file.py#function')"
        )
    return Reference(text=stripped, module=target, path=None, attribute=attribute)


def _is_dotted_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


__all__ = ["EXAMPLES", "Reference", "ReferenceSyntaxError", "parse_reference"]
