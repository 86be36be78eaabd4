"""Launches as data: a `Job` says which run to start, resume or re-run, in a few JSON
fields, so that it can be executed here (a server without `--queue`) or sent through
the queue to a worker (`nodeloom worker`). `execute` runs one against a RunService.

    job = Job.start(run_id, flow_id="f1", flow_version=3, message="hi")
    result = await execute(job, runs, sink)          # in this process
    payload = job.to_json()                          # or: on the queue, as a message
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, get_args

from nodeloom.engine.events import EventSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult
from nodeloom.runs import RunService

JobKind = Literal["start", "resume", "rerun"]
JOB_KINDS: tuple[str, ...] = get_args(JobKind)


@dataclass(frozen=True)
class Job:
    """One launch. `run_id` is the run it runs: the new run's (start, re-run: the id is
    given out before the run exists) or the resumed one's. `job_id` names this one
    submission: a message delivered again (its worker died) keeps it."""

    kind: JobKind
    run_id: str
    flow_id: str | None = None  # start: a saved flow's version...
    flow_version: int | None = None
    document: dict[str, Any] | None = None  # ...or a graph document (not a saved flow)
    message: Any = None
    trigger: dict[str, Any] | None = None
    chat_id: str | None = None
    answers: dict[str, Any] | None = None  # resume
    replay_external: bool = False
    source_run_id: str | None = None  # rerun: the run it runs again, from `from_node`
    from_node: str | None = None
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def start(
        cls,
        run_id: str,
        *,
        flow_id: str | None = None,
        flow_version: int | None = None,
        document: dict[str, Any] | None = None,
        message: Any = None,
        trigger: dict[str, Any] | None = None,
        chat_id: str | None = None,
    ) -> Job:
        return cls(
            "start",
            run_id,
            flow_id=flow_id,
            flow_version=flow_version,
            document=document,
            message=message,
            trigger=dict(trigger) if trigger else None,
            chat_id=chat_id,
        )

    @classmethod
    def resume(
        cls, run_id: str, answers: dict[str, Any] | None = None, replay_external: bool = False
    ) -> Job:
        return cls("resume", run_id, answers=answers or None, replay_external=replay_external)

    @classmethod
    def rerun(cls, source_run_id: str, from_node: str, new_run_id: str | None = None) -> Job:
        return cls(
            "rerun",
            new_run_id or uuid.uuid4().hex,
            source_run_id=source_run_id,
            from_node=from_node,
        )

    def to_json(self) -> dict[str, Any]:
        """The job as a JSON object (fields left at their default are left out)."""
        defaults = Job("start", "")
        return {
            key: value
            for key, value in asdict(self).items()
            if key in ("kind", "run_id", "job_id") or value != getattr(defaults, key)
        }

    @classmethod
    def from_json(cls, data: Any) -> Job:
        """The job of `to_json()`'s object. Raises ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a job is a JSON object; got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown job field(s) {unknown}; valid: {sorted(known)}")
        if data.get("kind") not in JOB_KINDS:
            raise ValueError(f"job kind {data.get('kind')!r}; valid: {list(JOB_KINDS)}")
        if not isinstance(data.get("run_id"), str) or not data["run_id"]:
            raise ValueError(f"a job needs a run_id string; got {data.get('run_id')!r}")
        return cls(**data)


async def execute(
    job: Job, runs: RunService, sink: EventSink | None = None, *, flow: Flow | None = None
) -> RunResult:
    """Run the job here, recorded by `runs`. `flow`: the start's compiled flow when the
    caller has it (a server compiles and checks it once per saved version)."""
    if job.kind == "resume":
        return await runs.resume(
            job.run_id, answers=job.answers, replay_external=job.replay_external, sink=sink
        )
    if job.kind == "rerun":
        assert job.source_run_id is not None and job.from_node is not None
        return await runs.rerun(job.source_run_id, job.from_node, sink=sink, new_run_id=job.run_id)
    if flow is None:
        flow = await flow_of(job, runs)
    return await runs.start(
        flow,
        job.message,
        trigger=job.trigger,
        sink=sink,
        chat_id=job.chat_id,
        run_id=job.run_id,
        flow_id=job.flow_id,
        flow_version=job.flow_version,
    )


async def flow_of(job: Job, runs: RunService) -> Flow:
    """The compiled flow a start job runs (from the run service's cache)."""
    if job.document is not None:
        return runs.flows.get(job.document)
    if job.flow_id is None:
        raise ValueError(f"start job {job.job_id} names neither a flow_id nor a document")
    saved = await runs.store.get_flow(job.flow_id, job.flow_version)
    return runs.flows.get(saved.document, ("saved", saved.flow_id, saved.version))
