"""Seed 002's start/agent/if/approval workflows, run on the native engine.

`loader` detects and converts a workflow file (see docs/formats/workflow.md); `logs`
reads a run's events back as the workflow's own log entries (`step_start`,
`llm_response`, `wait_input`, ...).
The `workflow-*` node folders are in `nodes/`.
"""

from nodeloom.formats.workflow.loader import loader
from nodeloom.formats.workflow.log import logs

__all__ = ["loader", "logs"]
