"""What the store returns: one frozen dataclass per kind of record, and the statuses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from nodeloom.plugins.contract import Event, SideEffects

RunState = Literal["running", "paused", "completed", "failed", "cancelled", "interrupted", "queued"]
RUN_STATES: tuple[str, ...] = get_args(RunState)
FINISHED_STATES: tuple[str, ...] = ("completed", "failed", "cancelled", "interrupted")

NodeState = Literal["started", "completed", "failed", "skipped", "waiting"]
NODE_STATES: tuple[str, ...] = get_args(NodeState)
FINISHED_NODE_STATES: tuple[str, ...] = ("completed", "failed", "skipped")
SIDE_EFFECTS: tuple[str, ...] = get_args(SideEffects)


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True, slots=True)
class FlowSummary:
    """A saved flow (without its document)."""

    id: str
    name: str
    latest_version: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


@dataclass(frozen=True, slots=True)
class FlowVersionInfo:
    """One saved version of a flow, without its document."""

    flow_id: str
    version: int
    document_hash: str
    size: int  # bytes of the document's JSON
    created_at: datetime


@dataclass(frozen=True, slots=True)
class FlowVersion:
    """One saved version of a flow, with its graph document."""

    flow_id: str
    name: str
    version: int
    document: dict[str, Any]
    document_hash: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run. JSON fields hold values (or blob references when read with resolve=False)."""

    id: str
    status: RunState
    flow_id: str | None
    flow_version: int | None
    document_hash: str | None
    trigger: Any
    chat_id: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_ms: float | None
    usage: dict[str, Any] | None
    error: dict[str, Any] | None
    steps: int
    settings: dict[str, Any] | None
    owner_pid: int | None
    owner_host: str | None
    heartbeat_at: datetime | None
    rerun_of: str | None = None  # the run this one runs again (it may have been pruned)
    rerun_from: str | None = None  # the node id the re-run starts from
    cancel_requested_at: datetime | None = None  # see Store.request_cancel
    last_seq: int = 0  # the highest event seq stored for the run
    parent_run_id: str | None = None  # the run whose node started this one (a sub-flow)
    parent_node: str | None = None  # the id of that node (Execute Flow, Flow Tool, error flow)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATES

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "flow_id": self.flow_id,
            "flow_version": self.flow_version,
            "document_hash": self.document_hash,
            "trigger": self.trigger,
            "chat_id": self.chat_id,
            "created_at": _time(self.created_at),
            "started_at": _time(self.started_at),
            "finished_at": _time(self.finished_at),
            "duration_ms": self.duration_ms,
            "usage": self.usage,
            "error": self.error,
            "steps": self.steps,
            "settings": self.settings,
            "owner": {"pid": self.owner_pid, "host": self.owner_host},
            "heartbeat_at": _time(self.heartbeat_at),
            "rerun_of": self.rerun_of,
            "rerun_from": self.rerun_from,
            "cancel_requested_at": _time(self.cancel_requested_at),
            "last_seq": self.last_seq,
            "parent_run_id": self.parent_run_id,
            "parent_node": self.parent_node,
        }


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored; `to_event()` gives back the engine's `Event`."""

    run_id: str
    seq: int
    event_type: str
    node_id: str | None
    node_name: str | None
    node_type: str | None
    data: dict[str, Any]
    timestamp: float

    def to_event(self) -> Event:
        return Event(
            self.event_type,
            self.data,
            self.node_id,
            self.node_name,
            self.node_type,
            self.run_id,
            self.seq,
            self.timestamp,
        )

    def to_json(self) -> dict[str, Any]:
        """The same shape as `Event.to_json()`."""
        return self.to_event().to_json()


@dataclass(frozen=True, slots=True)
class NodeExecution:
    """One execution of one node in a run (a checkpoint). `execution` counts from 1 per
    (run, node id): a Loop body node or an each-node runs several times."""

    run_id: str
    node_id: str
    execution: int
    node_name: str | None
    node_type: str | None
    status: NodeState
    inputs: dict[str, Any] | None
    outputs: dict[str, Any] | None
    error: dict[str, Any] | None
    attempts: int
    usage: dict[str, Any] | None
    started_at: datetime
    finished_at: datetime | None
    side_effects: SideEffects | None
    input_hash: str | None = None  # the engine's hash of the inputs (for re-use on re-run)
    state_delta: Any = None  # what the execution changed in the run's state
    activation: str | None = None  # its position in the run (see docs/durable-runs.md)
    parameters: dict[str, Any] | None = None  # the parameters it ran with (redacted)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "node_id": self.node_id,
            "execution": self.execution,
            "node_name": self.node_name,
            "node_type": self.node_type,
            "status": self.status,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "error": self.error,
            "attempts": self.attempts,
            "usage": self.usage,
            "started_at": _time(self.started_at),
            "finished_at": _time(self.finished_at),
            "side_effects": self.side_effects,
            "input_hash": self.input_hash,
            "state_delta": self.state_delta,
            "activation": self.activation,
            "parameters": self.parameters,
        }


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What `Store.prune` deleted. `bytes_freed` counts blob files; the database file
    itself keeps its size (SQLite reuses the freed pages; `VACUUM` shrinks it)."""

    runs: int = 0
    events: int = 0
    node_executions: int = 0
    documents: int = 0
    blobs: int = 0
    bytes_freed: int = 0


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """A row of the worker registry: a server or worker process and its last beat.
    `metrics`: its run metrics snapshot (nodeloom.operations.metrics)."""

    id: str
    host: str
    pid: int
    role: str
    started_at: datetime
    last_seen: datetime
    stopped_at: datetime | None
    concurrency: int
    in_flight: int
    metrics: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "host": self.host,
            "pid": self.pid,
            "role": self.role,
            "started_at": _time(self.started_at),
            "last_seen": _time(self.last_seen),
            "stopped_at": _time(self.stopped_at),
            "concurrency": self.concurrency,
            "in_flight": self.in_flight,
        }


@dataclass(frozen=True, slots=True)
class ScheduleRecord:
    """A Schedule Trigger of a saved flow's latest version (`id`: "<flow id>:<node id>").
    `spec`: {"cron" | "every", "timezone", "catch_up"}. `next_fire_at`: the next tick."""

    id: str
    flow_id: str
    node_id: str
    flow_version: int
    spec: dict[str, Any]
    next_fire_at: datetime | None
    last_fired_at: datetime | None
    paused: bool
    updated_at: datetime
    flow_name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "flow_id": self.flow_id,
            "flow_name": self.flow_name,
            "node_id": self.node_id,
            "flow_version": self.flow_version,
            **{key: self.spec.get(key) for key in ("cron", "every", "timezone", "catch_up")},
            "next_fire_at": _time(self.next_fire_at),
            "last_fired_at": _time(self.last_fired_at),
            "paused": self.paused,
        }


@dataclass(frozen=True, slots=True)
class WakeRecord:
    """A deadline of a paused run: node `node_id` is woken at `wake_at`."""

    run_id: str
    node_id: str
    wake_at: datetime
    kind: str


@dataclass(frozen=True, slots=True)
class PendingJobRecord:
    """A job of the outbox: recorded at `created_at`, not yet taken by a worker."""

    job_id: str
    run_id: str
    kind: str
    payload: dict[str, Any]
    created_at: datetime
