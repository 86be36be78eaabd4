"""What a server started with `--queue` does with a launch: it checks it, records what
must not be lost, and enqueues it for a worker.

A start is recorded first, as a `queued` run (its flow, trigger, chat and settings: all
a worker needs), then enqueued: if Redis loses the message, a worker's sweeper enqueues
the run again, and a run enqueued twice still runs once (a worker claims it, once).
A resume or re-run is checked against the store (the run is paused or interrupted; the
node exists), recorded in the store's outbox (`pending_jobs`: the whole job, answers
included), then enqueued: if Redis loses the message, a worker's sweeper enqueues the
job again from its row, and the worker that takes a job deletes its row first, so that a
job enqueued twice runs once (nodeloom.fleet.host).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import asdict
from typing import Any

from nodeloom.engine.flow import Flow, trigger_data
from nodeloom.errors import NodeloomError
from nodeloom.fleet.broker import enqueue, make_broker
from nodeloom.fleet.jobs import Job, flow_of
from nodeloom.runs import RunService
from nodeloom.runs.service import RESUMABLE
from nodeloom.store import RunStateError

log = logging.getLogger("nodeloom.fleet")


class QueueUnavailableError(NodeloomError):
    """Redis did not take the job (the API answers 503 `queue_unavailable`)."""

    code = "queue_unavailable"


class Submitter:
    def __init__(self, url: str, runs: RunService) -> None:
        self.url = url
        self.runs = runs
        self.broker: Any = make_broker(url)

    async def submit(self, job: Job, flow: Flow | None = None) -> None:
        """Check and record the job as above, then enqueue it. Raises what the store
        raises for a run in the wrong state or unknown, GraphError for a node that is
        not in the flow, QueueUnavailableError if Redis cannot take a resume or re-run (its
        outbox row is deleted again; a start is recorded: it is enqueued again later)."""
        store = self.runs.store
        if job.kind == "start":
            flow = flow or await flow_of(job, self.runs)
            await store.create_run(
                run_id=job.run_id,
                flow_id=job.flow_id,
                flow_version=job.flow_version,
                document=job.document if job.flow_id is None else None,
                status="queued",
                trigger=trigger_data(job.message, job.trigger),
                chat_id=job.chat_id,
                settings=asdict(flow.default_settings()),
            )
        elif job.kind == "resume":
            record = await store.get_run(job.run_id)
            if record.status not in RESUMABLE:
                raise RunStateError(job.run_id, record.status, RESUMABLE, "resumed")
            checked = await self.runs.flow_of(record)
            for ref in job.answers or {}:
                checked.check_node(ref.split("/")[0], "answered")
            checked.check_answers(job.answers or {})
        else:
            assert job.source_run_id is not None and job.from_node is not None
            original = await store.get_run(job.source_run_id)
            (await self.runs.flow_of(original)).check_node(job.from_node, "from")
        if job.kind != "start":
            await store.add_pending_job(job.job_id, job.run_id, job.kind, job.to_json())
        try:
            await asyncio.to_thread(enqueue, self.broker, job)
        except Exception as exc:  # redis.ConnectionError and its kin
            if job.kind == "start":
                log.warning("run %s: not enqueued (%s); a worker's sweep will", job.run_id, exc)
                return
            # Refused (503): nothing changed. Its row goes, or a sweep would run it later
            # besides the one the client sends again.
            with contextlib.suppress(Exception):
                await store.take_pending_job(job.job_id)
            raise QueueUnavailableError(
                f"the queue ({self.url.split('@')[-1]}) did not take the {job.kind} of run "
                f"{job.run_id}: {exc}. Check that Redis runs, then send it again"
            ) from exc

    def close(self) -> None:
        self.broker.close()
