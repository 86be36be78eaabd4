"""How a run ended."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class RunStatus(enum.StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PAUSED = "paused"


EXIT_CODES = {
    RunStatus.COMPLETED: 0,
    RunStatus.FAILED: 1,
    RunStatus.PAUSED: 3,
    RunStatus.CANCELLED: 4,
}
EXIT_INVALID = 2


@dataclass
class RunResult:
    """`outputs` holds every port that fired of every node that ran, by node name."""

    run_id: str
    status: RunStatus
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    duration_ms: float = 0.0
    steps: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.COMPLETED

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "result",
            "run_id": self.run_id,
            "status": self.status.value,
            "outputs": self.outputs,
            "error": self.error,
            "duration_ms": round(self.duration_ms, 3),
            "steps": self.steps,
            "usage": self.usage,
        }
