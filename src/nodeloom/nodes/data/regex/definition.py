"""Regex: match, extract, replace or split text with a linear-time (RE2) pattern."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

MODES = ("match", "extract_all", "replace", "split")
FLAGS = "ims"
DEFAULT_TIMEOUT = 10.0

# Perl syntax RE2 does not have, found without compiling (definitions import nothing
# heavy): lookaround and backreferences. The executor reports anything else RE2 refuses.
_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")


def unsupported_syntax(pattern: str) -> str | None:
    """What in `pattern` RE2 cannot run (lookaround, a backreference), or None."""
    escaped = False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
            if char in "123456789":
                return f"a backreference (\\{char})"
            continue
        if char == "\\":
            escaped = True
        elif char == "(":
            for opener in _LOOKAROUND:
                if pattern.startswith(opener, index):
                    return f"a lookaround ({opener}...)"
    return None


def check_regex(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    pattern = data.get("pattern")
    if isinstance(pattern, str) and "{{" not in pattern:
        if pattern == "":
            issues.append(("pattern", "pattern must not be empty, e.g. (\\d{4})-(\\d{2})"))
        elif found := unsupported_syntax(pattern):
            issues.append(
                (
                    "pattern",
                    f"pattern uses {found}, which RE2 (a linear-time engine) does not "
                    "support: capture the part you need with a group instead, or test it "
                    "in a following node",
                )
            )
    flags = data.get("flags")
    if isinstance(flags, str) and "{{" not in flags:
        wrong = sorted({c for c in flags if c not in FLAGS})
        if wrong:
            issues.append(
                (
                    "flags",
                    f"flags takes the letters i (ignore case), m (multi-line ^ $) and s (. "
                    f"matches newline); got {''.join(wrong)!r}",
                )
            )
    mode = data.get("mode")
    if mode == "replace" and not isinstance(data.get("replacement", ""), str):
        issues.append(("replacement", "replacement must be text, e.g. \\1 or \\g<name>"))
    return issues


definition = NodeDefinition(
    id="regex",
    name="Regex",
    category="data",
    description="Matches a regular expression (RE2: linear time, no lookaround or "
    "backreferences) against a string: first match with its groups, every match, replace "
    "or split.",
    icon="Regex",
    inputs=(Port("input", description="A string, or an object holding one at `field`."),),
    outputs=(
        Port(
            "output",
            description="match: {matched, groups, named}; extract_all: a list; replace: "
            "the string; split: a list.",
        ),
    ),
    parameters=(
        Parameter(
            "pattern",
            "code",
            "Pattern",
            required=True,
            language="regex",
            placeholder="(?P<year>\\d{4})-(?P<month>\\d{2})",
            description="An RE2 regular expression (Python syntax without lookaround and "
            "backreferences). Named groups: (?P<name>...).",
        ),
        Parameter(
            "field",
            "string",
            "Field",
            default="",
            placeholder="message.text",
            description="Dotted path to the string in the input; empty: the input itself, "
            "which must then be a string.",
        ),
        Parameter("mode", "enum", "Mode", default="match", options=MODES),
        Parameter(
            "replacement",
            "string",
            "Replacement",
            default="",
            description="Mode replace: the text each match becomes; \\1 or \\g<name> "
            "insert a group.",
        ),
        Parameter(
            "flags",
            "string",
            "Flags",
            default="",
            placeholder="i",
            description="Letters: i ignore case, m ^ and $ match at line breaks, s . "
            "matches a newline.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=DEFAULT_TIMEOUT,
            minimum=0.1,
            maximum=300,
            description="Seconds the matching may take (RE2 is linear in the text, so "
            "only a very large text comes near it).",
        ),
    ),
    side_effects="pure",
    check=check_regex,
)
