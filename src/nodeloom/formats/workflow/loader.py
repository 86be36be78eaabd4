"""The `workflow` format's loader: detect a file, check it, convert it.

Importing this module is light (the workflow-* node folders live under this package, so
discovery imports it): the checks and the conversion are imported when a file is converted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.formats.options import FormatOptions
from nodeloom.formats.workflow.detect import detect


class WorkflowLoader:
    """Seed 002's start/agent/if/approval workflows -> native graphs of each-nodes."""

    name = "workflow"

    def detect(self, document: Any, path: Path | None) -> bool:
        return detect(document, path)

    def to_graph(self, document: Any, options: FormatOptions) -> dict[str, Any]:
        """The native graph; GraphError listing every problem (each located) if the
        workflow breaks a rule. Nothing runs and no model is called before this passes."""
        from nodeloom.formats.workflow.convert import to_native
        from nodeloom.formats.workflow.document import read_workflow
        from nodeloom.formats.workflow.normalize import normalize
        from nodeloom.formats.workflow.validate import check_workflow

        if not isinstance(document, Mapping):
            raise GraphError([Issue("invalid_graph", "a workflow is a JSON object with 'nodes'")])
        workflow, issues = read_workflow(document)
        workflow = normalize(workflow)
        issues.extend(check_workflow(workflow))
        if issues:
            raise GraphError(issues)
        return to_native(workflow)


loader = WorkflowLoader()
