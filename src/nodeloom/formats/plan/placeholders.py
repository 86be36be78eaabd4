"""`{placeholder}` substitution from `--var key=value`.

Every string value of the chosen plan (not its keys) is filled: `{date}` becomes the value of
`--var date=...`. A placeholder is `{name}` with `name` a Python identifier; `{{name}}` writes
a literal `{name}`; any other brace (JSON in a prompt, `{ x }`) is left alone. A placeholder
without a value is an error (`unknown_placeholder`), never sent to the model as is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.plan.schema import where

PLACEHOLDER = re.compile(r"\{\{([A-Za-z_]\w*)\}\}|\{([A-Za-z_]\w*)\}")


def fill(value: Any, variables: Mapping[str, Any], prefix: str) -> tuple[Any, list[Issue]]:
    """`value` with its placeholders filled, and an issue per placeholder without a value."""
    issues: list[Issue] = []
    filled = _fill(value, variables, prefix, issues)
    return filled, issues


def _fill(value: Any, variables: Mapping[str, Any], location: str, issues: list[Issue]) -> Any:
    if isinstance(value, str):
        return _fill_text(value, variables, location, issues)
    if isinstance(value, Mapping):
        return {
            key: _fill(item, variables, where(location, key), issues) for key, item in value.items()
        }
    if isinstance(value, list):
        return [
            _fill(item, variables, where(location, index), issues)
            for index, item in enumerate(value)
        ]
    return value


def _fill_text(text: str, variables: Mapping[str, Any], location: str, issues: list[Issue]) -> str:
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped is not None:
            return "{" + escaped + "}"
        if name in variables:
            return str(variables[name])
        if name not in missing:
            missing.append(name)
        return match.group(0)

    filled = PLACEHOLDER.sub(replace, text)
    for name in missing:
        given = ", ".join(sorted(variables)) or "none"
        issues.append(
            Issue(
                "unknown_placeholder",
                f"placeholder {{{name}}} has no value: pass --var {name}=VALUE (variables "
                f"given: {given}); write {{{{{name}}}}} for a literal {{{name}}}",
                node_id=_node_of(location),
                field=location or None,
            )
        )
    return filled


def _node_of(location: str) -> str | None:
    match = re.search(r"(?:^|\.)(nodes\[\d+\])", location)
    return match.group(1) if match else None


__all__ = ["PLACEHOLDER", "fill"]
