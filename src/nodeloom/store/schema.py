"""The store's tables, as SQLAlchemy 2 typed declarative models.

    documents        every distinct graph document, once, by sha256 of its canonical JSON
    flows            a saved flow: id, name, latest version, soft-delete time
    flow_versions    (flow_id, version) -> documents.hash; one row per save
    runs             one row per run: status, trigger, owner (pid, host, heartbeat), the
                     highest event seq stored, a cancel request, the run it re-runs, ...
    events           (run_id, seq): every event of a run, in order
    node_executions  (run_id, node_id, execution): the checkpoints, one per node execution
    blobs            values too large for a row, written once to the blob directory
    blob_refs        (run_id, sha256): which runs reference which blob (for prune)
    store_meta       key -> value: the store's id (names its blob folder)
    workers          the worker registry: one row per server or worker process, beaten
                     every few seconds with its load and a snapshot of its run metrics

    schedules        one per Schedule Trigger of a saved flow: its spec, next fire time
                     (the lease: a tick fires where an UPDATE moves it on), pause flag
    wakes            (run_id, node_id): a paused run's deadlines (a Wait's wake time, a
                     person's timeout), leased by the timer service that resumes it
    pending_jobs     the outbox of a queue deployment: each resume or re-run job recorded
                     before it is enqueued, deleted by the worker that takes it

JSON columns are TEXT holding compact JSON written by `nodeloom.store.packing`: a value
larger than the blob threshold is replaced by `{"$ref": "blob:<sha256>", ...}`.
Times are timezone-aware UTC datetimes (stored as UTC); an event's `timestamp` stays the
float seconds-since-epoch the engine gave it. Migrations live in `migrations/versions/`;
a change here needs a new revision there (tests compare the two).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

VERSION_TABLE = "nodeloom_schema_version"

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime stored as UTC and always read back timezone-aware (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime, str: String(), int: Integer}


class StoreMeta(Base):
    __tablename__ = "store_meta"

    key: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[str]


class Document(Base):
    __tablename__ = "documents"

    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    body: Mapped[str] = mapped_column(Text)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime]


class Flow(Base):
    __tablename__ = "flows"

    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    latest_version: Mapped[int]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    deleted_at: Mapped[datetime | None]


class FlowVersion(Base):
    __tablename__ = "flow_versions"

    flow_id: Mapped[str] = mapped_column(ForeignKey("flows.id"), primary_key=True)
    version: Mapped[int] = mapped_column(primary_key=True)
    document_hash: Mapped[str] = mapped_column(String(64), ForeignKey("documents.hash"))
    created_at: Mapped[datetime]


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(primary_key=True)
    flow_id: Mapped[str | None] = mapped_column(ForeignKey("flows.id"))
    flow_version: Mapped[int | None]
    document_hash: Mapped[str | None] = mapped_column(String(64), ForeignKey("documents.hash"))
    status: Mapped[str] = mapped_column(String(16))
    trigger: Mapped[str | None] = mapped_column(Text)
    chat_id: Mapped[str | None]
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    duration_ms: Mapped[float | None] = mapped_column(Float)
    usage: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    steps: Mapped[int] = mapped_column(default=0)
    settings: Mapped[str | None] = mapped_column(Text)
    owner_pid: Mapped[int | None]
    owner_host: Mapped[str | None]
    heartbeat_at: Mapped[datetime | None]
    rerun_of: Mapped[str | None]  # a run id, deliberately no foreign key: prune may drop it
    rerun_from: Mapped[str | None]  # a node id
    cancel_requested_at: Mapped[datetime | None]
    last_seq: Mapped[int] = mapped_column(default=0, server_default=text("0"))
    parent_run_id: Mapped[str | None]  # the run whose node started this one (no foreign key)
    parent_node: Mapped[str | None]  # the id of that node

    __table_args__ = (
        Index(None, "created_at"),
        Index(None, "status", "heartbeat_at"),
        Index(None, "flow_id", "created_at"),
        Index(None, "chat_id", "created_at"),
        Index(None, "document_hash"),
        Index(None, "parent_run_id"),
    )


class Event(Base):
    __tablename__ = "events"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    node_id: Mapped[str | None]
    node_name: Mapped[str | None]
    node_type: Mapped[str | None]
    data: Mapped[str | None] = mapped_column(Text)
    timestamp: Mapped[float] = mapped_column(Float)


class NodeExecution(Base):
    __tablename__ = "node_executions"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    node_id: Mapped[str] = mapped_column(primary_key=True)
    execution: Mapped[int] = mapped_column(primary_key=True)
    node_name: Mapped[str | None]
    node_type: Mapped[str | None]
    status: Mapped[str] = mapped_column(String(16))
    inputs: Mapped[str | None] = mapped_column(Text)
    outputs: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(default=0)
    usage: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    side_effects: Mapped[str | None] = mapped_column(String(16))
    input_hash: Mapped[str | None] = mapped_column(String(64))
    state_delta: Mapped[str | None] = mapped_column(Text)
    activation: Mapped[str | None] = mapped_column(Text)
    parameters: Mapped[str | None] = mapped_column(Text)


class Blob(Base):
    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    mime: Mapped[str]
    created_at: Mapped[datetime]


class BlobRef(Base):
    __tablename__ = "blob_refs"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    sha256: Mapped[str] = mapped_column(
        String(64), ForeignKey("blobs.sha256"), primary_key=True, index=True
    )


class Worker(Base):
    """A server or worker process (nodeloom.operations.WorkerBeat): who, where, since
    when, how busy, and its run counts. Kept after a clean stop (`stopped_at`) so that
    fleet totals do not go down."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str]
    pid: Mapped[int]
    role: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime]
    last_seen: Mapped[datetime] = mapped_column(index=True)
    stopped_at: Mapped[datetime | None]
    concurrency: Mapped[int]
    in_flight: Mapped[int] = mapped_column(default=0)
    metrics: Mapped[str | None] = mapped_column(Text)


class Schedule(Base):
    __tablename__ = "schedules"

    id: Mapped[str] = mapped_column(primary_key=True)  # "<flow id>:<node id>"
    flow_id: Mapped[str] = mapped_column(ForeignKey("flows.id"), index=True)
    node_id: Mapped[str]
    flow_version: Mapped[int]
    spec: Mapped[str] = mapped_column(Text)  # {"cron"|"every", "timezone", "catch_up"}
    next_fire_at: Mapped[datetime | None] = mapped_column(index=True)
    last_fired_at: Mapped[datetime | None]
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    updated_at: Mapped[datetime]


class Wake(Base):
    __tablename__ = "wakes"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    node_id: Mapped[str] = mapped_column(primary_key=True)
    wake_at: Mapped[datetime] = mapped_column(index=True)
    kind: Mapped[str] = mapped_column(String(16))  # the request's kind: wait, approval, input
    leased_until: Mapped[datetime | None]


class PendingJob(Base):
    """A resume or re-run job enqueued and not yet taken by a worker (the outbox): if
    Redis loses its message, a worker's sweep enqueues `payload` (the job) again."""

    __tablename__ = "pending_jobs"

    job_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str]
    kind: Mapped[str] = mapped_column(String(16))  # resume, rerun
    payload: Mapped[str] = mapped_column(Text)  # the job as JSON (answers included)
    created_at: Mapped[datetime] = mapped_column(index=True)
