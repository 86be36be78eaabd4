"""Recorded runs: every run written to the run store as it happens, resumable after a pause
or a crash from any process, re-runnable from a node. See docs/durable-runs.md.

    from nodeloom.runs import RunService
"""

from nodeloom.runs.history import History
from nodeloom.runs.recorder import Recorder
from nodeloom.runs.service import RESUMABLE, RunService

__all__ = ["RESUMABLE", "History", "Recorder", "RunService"]
