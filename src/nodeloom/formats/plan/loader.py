"""The plan.json format's loader: detect a plan file and convert it to a native graph.

Steps, each collecting every problem it finds (a GraphError lists them all, exit 2):
choose the pattern -> fill `{placeholders}` -> check each node's schema -> check the
seed's rules and every tool name -> write the native graph.

Importing this module is light (the plan-* node folders live under this package, so
discovery imports it): the schema (pydantic) is imported when a document is detected or
converted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.formats.options import FormatOptions


class PlanLoader:
    name = "plan"

    def detect(self, document: Any, path: Path | None) -> bool:
        from nodeloom.formats.plan.patterns import is_plan

        return is_plan(document)

    def to_graph(self, document: Any, options: FormatOptions) -> dict[str, Any]:
        from nodeloom.formats.plan.catalogue import read_catalogue
        from nodeloom.formats.plan.checks import check_plan
        from nodeloom.formats.plan.convert import plan_model, to_native
        from nodeloom.formats.plan.patterns import choose
        from nodeloom.formats.plan.placeholders import fill
        from nodeloom.formats.plan.schema import parse_plan

        chosen = choose(document, options.pattern)
        filled, issues = fill(chosen.document, options.variables, chosen.prefix)
        plan, plan_issues = parse_plan(filled, chosen.prefix, chosen.name)
        issues += plan_issues
        catalogue, tool_issues = read_catalogue(options.tools)
        issues += tool_issues
        model, model_issues = plan_model()
        issues += model_issues
        issues += check_plan(plan.indexed, catalogue, chosen.prefix)
        if issues:
            named = [_named(issue, chosen.document) for issue in issues]
            raise GraphError(sorted(named, key=_node_order))
        return to_native(plan, catalogue, model)


def _node_order(issue: Issue) -> int:
    """Issues of the file first, then node by node (a stable sort keeps each node's order)."""
    index = _node_index(issue)
    return -1 if index is None else index


def _node_index(issue: Issue) -> int | None:
    match = re.fullmatch(r"nodes\[(\d+)\]", issue.node_id or "")
    return int(match.group(1)) if match else None


def _named(issue: Issue, document: Any) -> Issue:
    """The issue's message led by its node's index and `node_name` as written in the file
    (`node 2 ('fetch_weather'): ...`), so a reader finds the node without counting."""
    index = _node_index(issue)
    if index is None:
        return issue
    nodes = document.get("nodes") if isinstance(document, Mapping) else None
    raw = nodes[index] if isinstance(nodes, list) and index < len(nodes) else None
    name = raw.get("node_name") if isinstance(raw, Mapping) else None
    label = f"node {index} ({name!r})" if isinstance(name, str) and name else f"node {index}"
    return dataclasses.replace(issue, message=f"{label}: {issue.message}")


loader = PlanLoader()

__all__ = ["PlanLoader", "loader"]
