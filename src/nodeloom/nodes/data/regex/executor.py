"""Regex: run one RE2 pattern over a string of the input, in one of four modes.

RE2 (google-re2) matches in time linear in the text, whatever the pattern: no pattern a
user types can stall the run. It has no lookaround and no backreferences; a pattern it
cannot compile fails the node with `invalid_parameter` and RE2's reason. The work runs
in a thread, so `timeout` (and the engine's per-node timeout) can end a long one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import re2

from nodeloom.conditions import json_type, preview, resolve_path
from nodeloom.errors import NodeError
from nodeloom.nodes.data.regex.definition import DEFAULT_TIMEOUT, FLAGS, MODES
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

# Below this many characters the work is done inline: a thread costs more than the match.
INLINE_BELOW = 64 * 1024
TIMEOUT_MARGIN = 0.1
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern to stderr


class RegexExecutor:
    node_type = "regex"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        mode = data.get("mode") or "match"
        if mode not in MODES:
            raise _invalid("mode", f"Regex mode must be one of {', '.join(MODES)}; got {mode!r}.")
        pattern = compile_pattern(data.get("pattern"), data.get("flags"))
        replacement = data.get("replacement") or ""
        if not isinstance(replacement, str):
            raise _invalid(
                "replacement",
                f"Regex replacement must be text; got {json_type(replacement)}.",
            )
        text = _text(inputs["input"].value, data.get("field") or "")
        timeout = _timeout(data.get("timeout"))
        if len(text) < INLINE_BELOW:
            return ExecutionResult({"output": apply(pattern, mode, text, replacement)})
        # `timeout` is also the engine's per-node timeout: ours comes a little earlier,
        # so that the clearer `regex_timeout` is what the run reports.
        try:
            async with asyncio.timeout(timeout - min(TIMEOUT_MARGIN, timeout / 20)):
                value = await asyncio.to_thread(apply, pattern, mode, text, replacement)
        except TimeoutError:
            raise NodeError(
                f"Regex did not finish within {timeout:g} s on a text of {len(text):,} "
                "characters; raise `timeout` or split the text first (Text Split).",
                code="regex_timeout",
                retryable=False,
                details={"field": "timeout"},
            ) from None
        return ExecutionResult({"output": value})


def compile_pattern(pattern: Any, flags: Any) -> Any:
    if not isinstance(pattern, str) or pattern == "":
        raise _invalid(
            "pattern",
            f"Regex needs a non-empty pattern such as (\\d{{4}})-(\\d{{2}}); got "
            f"{json_type(pattern) if not isinstance(pattern, str) else 'an empty string'}.",
        )
    flags = flags or ""
    if not isinstance(flags, str) or any(c not in FLAGS for c in flags):
        raise _invalid(
            "flags",
            f"Regex flags are letters among i, m and s (e.g. 'im'); got {flags!r}.",
        )
    prefix = f"(?{''.join(sorted(set(flags)))})" if flags else ""
    try:
        return re2.compile(prefix + pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise _invalid(
            "pattern",
            f"RE2 cannot compile the pattern {pattern!r}: {reason}. RE2 runs in linear time "
            "and so has no lookaround ((?=, (?!, (?<=, (?<!) and no backreferences (\\1); "
            "rewrite the pattern without them (capture the part you need in a group).",
        ) from None


def apply(pattern: Any, mode: str, text: str, replacement: str) -> Any:
    """The output of `mode` for `text`."""
    if mode == "match":
        found = pattern.search(text)
        if found is None:
            return {"matched": False, "groups": [], "named": {}}
        return {
            "matched": True,
            "groups": [found.group(0), *found.groups()],
            "named": found.groupdict(),
        }
    if mode == "extract_all":
        if pattern.groupindex:
            return [found.groupdict() for found in pattern.finditer(text)]
        return [found.group(0) for found in pattern.finditer(text)]
    if mode == "replace":
        try:
            return pattern.sub(replacement, text)
        except (re2.error, IndexError, KeyError) as exc:
            raise _invalid(
                "replacement",
                f"Regex replacement {replacement!r} names a group the pattern does not "
                f"have ({exc}); the pattern has {pattern.groups} group(s)"
                + (f" named {', '.join(sorted(pattern.groupindex))}" if pattern.groupindex else "")
                + ". Write \\\\ for a literal backslash.",
            ) from None
    return pattern.split(text)


def _text(value: Any, field: str) -> str:
    if not field:
        if isinstance(value, str):
            return value
        raise NodeError(
            f"Regex needs a string on its `input` port, or `field` naming one inside it; "
            f"received {json_type(value)} {preview(value)}. Set `field` to the path of the "
            "text (e.g. message.text).",
            code="invalid_input",
            retryable=False,
            details={"port": "input", "received_type": json_type(value)},
        )
    found, text = resolve_path(value, field)
    if isinstance(text, str):
        return text
    what = f"{json_type(text)} {preview(text)}" if found else "nothing (the path is missing)"
    keys = f" The input's keys: {', '.join(map(str, value))}." if isinstance(value, Mapping) else ""
    raise NodeError(
        f"Regex field {field!r} must lead to a string; found {what}.{keys}",
        code="invalid_input",
        retryable=False,
        details={"field": "field", "received_type": json_type(text) if found else "missing"},
    )


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _invalid("timeout", f"Regex timeout is a number of seconds > 0; got {value!r}.")
    return float(value)


def _invalid(field: str, message: str) -> NodeError:
    return NodeError(message, code="invalid_parameter", retryable=False, details={"field": field})


executor = RegexExecutor()
