"""Which plan of a file runs: a bare `{nodes}` plan, or one pattern of a file that maps
pattern names to `{task, nodes}` (chosen with `--pattern NAME`, required when there are
several)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.formats.plan.schema import pattern_prefix


@dataclass(frozen=True, slots=True)
class Chosen:
    name: str | None  # None: a bare plan
    prefix: str  # where its fields are located: "" or "patterns.<name>"
    document: Any


# Keys only plan nodes have; a native node has a `type` instead.
_PLAN_KEYS = frozenset({"node_type", "node_name", "thread_id", "task_prompt", "initial_tool_name"})


def is_plan(document: Any) -> bool:
    """Is this a plan file? A bare plan has `nodes` that look like plan nodes; a file of
    patterns has no top-level `nodes` (a native graph always has) and maps every name to
    an object with a `nodes` list holding no native node."""
    if not isinstance(document, Mapping):
        return False
    if "nodes" in document:
        nodes = document["nodes"]
        return isinstance(nodes, list) and any(_is_plan_node(node) for node in nodes)
    return bool(document) and all(
        isinstance(value, Mapping)
        and isinstance(value.get("nodes"), list)
        and not any(isinstance(node, Mapping) and "type" in node for node in value["nodes"])
        for value in document.values()
    )


def _is_plan_node(node: Any) -> bool:
    return isinstance(node, Mapping) and (
        "node_type" in node or ("type" not in node and not _PLAN_KEYS.isdisjoint(node))
    )


def choose(document: Mapping[str, Any], pattern: str | None) -> Chosen:
    """The plan to run; GraphError (`unknown_pattern`, `missing_pattern`) listing the
    patterns when the choice is wrong or missing."""
    if "nodes" in document:
        if pattern is not None:
            raise GraphError(
                [
                    Issue(
                        "unknown_pattern",
                        f"--pattern {pattern!r} was given, but this plan file has no patterns "
                        '(it is one plan: {"nodes": [...]}); drop --pattern',
                        field="pattern",
                    )
                ]
            )
        return Chosen(None, "", document)
    names = [str(name) for name in document]
    listed = ", ".join(names)
    if pattern is None:
        if len(names) == 1:
            return Chosen(names[0], pattern_prefix(names[0]), document[names[0]])
        raise GraphError(
            [
                Issue(
                    "missing_pattern",
                    f"this plan file has {len(names)} patterns ({listed}); choose one with "
                    "--pattern NAME",
                    field="pattern",
                )
            ]
        )
    if pattern not in document:
        hint = difflib.get_close_matches(pattern, names, n=1)
        suggestion = f"did you mean '{hint[0]}'? " if hint else ""
        raise GraphError(
            [
                Issue(
                    "unknown_pattern",
                    f"no pattern {pattern!r} in this plan file; {suggestion}patterns: {listed}",
                    field="pattern",
                )
            ]
        )
    return Chosen(pattern, pattern_prefix(pattern), document[pattern])


__all__ = ["Chosen", "choose", "is_plan"]
