"""The built-in toolsets: each name and the tools (function names) the model sees.

Pure data, read by the Toolset node's definition and by the plan format's tool catalogue;
the Toolset node's `builtins.py` builds the tools themselves.
"""

from __future__ import annotations

import difflib

# Built-in toolset -> the tools (function names) the model sees. The executor builds them.
TOOLSETS: dict[str, tuple[str, ...]] = {
    "calculator": (
        "add",
        "subtract",
        "multiply",
        "divide",
        "exponentiate",
        "factorial",
        "is_prime",
        "square_root",
    ),
    "datetime": ("current_datetime",),
    "http_fetch": ("http_fetch",),
}


def unknown_toolset_message(name: object) -> str:
    """What to say about a toolset name that is not built in: a did-you-mean and the list."""
    valid = ", ".join(TOOLSETS)
    hint = difflib.get_close_matches(str(name), list(TOOLSETS), n=1)
    suggestion = f"did you mean '{hint[0]}'? " if hint else ""
    return f"no built-in toolset {name!r}; {suggestion}built-in toolsets: {valid}"


__all__ = ["TOOLSETS", "unknown_toolset_message"]
