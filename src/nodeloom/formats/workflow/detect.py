"""Is a document a start/agent/if/approval workflow (seed 002)?

Yes when the file is named `*.workflow.json` / `*.workflow.yaml`, when it has a
`connections` list beside its `nodes` (the native format has no such field), or when its
nodes are placed with top-level `x` / `y` (the native format uses `position`) and at least
one has a workflow type. A native graph is never taken for a workflow: it has `edges` and
`position`, and `"format": "nodeloom"` (which every converted graph carries) settles it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

WORKFLOW_TYPES = frozenset({"start", "agent", "if", "approval", "input", "end"})
SUFFIXES = (".workflow.json", ".workflow.yaml", ".workflow.yml")


def detect(document: Any, path: Path | None = None) -> bool:
    if not isinstance(document, Mapping):
        return False
    if path is not None and path.name.endswith(SUFFIXES):
        return True
    nodes = document.get("nodes")
    if not isinstance(nodes, list):
        return False
    if "connections" in document:
        return True
    if not nodes or not all(isinstance(node, Mapping) for node in nodes):
        return False
    placed = all("x" in node and "y" in node and "position" not in node for node in nodes)
    return placed and any(node.get("type") in WORKFLOW_TYPES for node in nodes)
