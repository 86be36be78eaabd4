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
    waiting: list[dict[str, Any]] = field(default_factory=list)  # paused: who waits for what
    state: dict[str, Any] = field(default_factory=dict)  # the run's shared state at the end
    result: Any = None  # a value a node set as the run's result (formats use it)

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.COMPLETED

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "result",
            "run_id": self.run_id,
            "status": self.status.value,
            "outputs": self.outputs,
            "error": self.error,
            "duration_ms": round(self.duration_ms, 3),
            "steps": self.steps,
            "usage": self.usage,
        }
        if self.status is RunStatus.PAUSED:
            data["waiting"] = [
                {"node_id": w["node_id"], "node_name": w["node_name"], "kind": w["kind"]}
                for w in self.waiting
            ]
        if self.state:
            data["state"] = self.state
        if self.result is not None:
            data["result"] = self.result
        return data
