"""What a worker does with one delivered job, whether it is the first delivery or not.

A message is delivered again when the worker that had it died (Dramatiq's redelivery),
or twice when a queued run was enqueued again after Redis lost its queue. The run's
record in the store settles what to do, so that no run is run twice:

    start of a `queued` run     claim it (exactly one claim succeeds) and run it
    start of a new run/re-run   run it (the record is created by the run; a re-run's id
                                is the job's, so a copy finds the record made)
    resume of a paused run      resume it with the job's answers
    the run is `running`        delivered again after its worker died: once its owner
                                is found gone (same host: its pid; else its heartbeat),
                                it is `interrupted`: resume it from its checkpoints (an
                                interrupted `external` node waits for confirmation);
                                a first delivery of a run running elsewhere is a
                                duplicate: nothing to do
    the run `interrupted`       resume it from its checkpoints
    the run has ended/paused    nothing to do

A job delivered more than MAX_DELIVERIES times (each time its worker died before it
ended) is quarantined: its run ends `failed` with error code `run_quarantined`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import socket
from datetime import timedelta
from typing import Any

from nodeloom.engine.result import RunResult
from nodeloom.fleet.jobs import Job, execute
from nodeloom.fleet.service import WorkerRuns
from nodeloom.plugins.contract import Event
from nodeloom.runs.service import RESUMABLE
from nodeloom.store import NotFoundError, RunRecord, RunStateError, Store
from nodeloom.store.records import FINISHED_STATES

log = logging.getLogger("nodeloom.fleet")

MAX_DELIVERIES = int(os.environ.get("NODELOOM_MAX_DELIVERIES", 3))
DELIVERIES_TTL_SECONDS = 7 * 24 * 3600


class Deliveries:
    """How many times each job was delivered, in Redis (`nodeloom:deliveries:<job>`).

    The count of a job that ended is deleted with the next delivery's count, in its round
    trip (one round trip a job, not two), or by `flush` (a worker stopping). Until then
    it is a count nobody reads: a copy of that job delivered meanwhile finds its run
    ended, whatever its count. Called from Dramatiq's worker threads: `done` only
    appends to a deque, and `count` takes what it holds."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._ended: collections.deque[str] = collections.deque()

    def count(self, job_id: str) -> int:
        """Count this delivery; returns how many there were, this one included (one
        round trip: the ended jobs' counts deleted, INCR and EXPIRE, pipelined; no
        MULTI/EXEC, EXPIRE only refreshes)."""
        key = f"nodeloom:deliveries:{job_id}"
        pipe = self.client.pipeline(transaction=False)
        ended = self._take_ended()
        if ended:
            pipe.delete(*ended)
        pipe.incr(key)
        pipe.expire(key, DELIVERIES_TTL_SECONDS)
        try:
            count = pipe.execute()[-2]
        except BaseException:
            self._ended.extend(ended)  # not deleted: they go with the next round trip
            raise
        return int(count)

    def done(self, job_id: str) -> None:
        """The job ended here: its count goes with the next round trip."""
        self._ended.append(f"nodeloom:deliveries:{job_id}")

    def flush(self) -> None:
        """Delete the counts of the jobs that ended (a worker stopping)."""
        ended = self._take_ended()
        if ended:
            self.client.delete(*ended)

    def _take_ended(self) -> list[str]:
        taken = []
        with contextlib.suppress(IndexError):
            while True:
                taken.append(self._ended.popleft())
        return taken


async def deliver(job: Job, runs: WorkerRuns, count: int) -> RunResult | None:
    """Run the job as its run's record says (see the module's table). None: nothing to
    do. Raises what the run service raises (RunStateError, NotFoundError, StoreError)."""
    store = runs.store
    if job.kind == "resume":
        record = await store.get_run(job.run_id)
        if record.status in RESUMABLE and (count == 1 or record.status == "paused"):
            return await execute(job, runs)
        return await take_up(runs, record, count)
    if job.kind == "start":  # the claim first: one read fewer for the usual case
        try:
            return await runs.start_queued(job.run_id)
        except NotFoundError:
            return await execute(job, runs)
        except RunStateError:
            return await take_up(runs, await store.get_run(job.run_id), count)
    record = await _find(store, job.run_id)
    if record is None:
        try:
            return await execute(job, runs)
        except ValueError:  # a re-run's record made meanwhile by another delivery: take it up
            record = await _find(store, job.run_id)
            if record is None:
                raise
    if record.status == "queued":
        return await runs.start_queued(job.run_id)
    return await take_up(runs, record, count)


async def take_up(runs: WorkerRuns, record: RunRecord, count: int) -> RunResult | None:
    """Resume a run whose worker died, once its owner is found gone."""
    store = runs.store
    stale = timedelta(seconds=max(3 * runs.heartbeat, 1.0))
    while record.status == "running":
        if _owned_here(record) and runs.live.get(record.id) is None:
            # This process lost it (its store failed under it): it is not running.
            await store.update_run(record.id, status="interrupted")
        elif count > 1:
            await store.find_interrupted(stale_after=stale)
        record = await store.get_run(record.id)
        if record.status == "running":
            if count == 1:
                log.info("run %s runs elsewhere: this delivery is a duplicate", record.id)
                return None
            await asyncio.sleep(min(runs.heartbeat, 5.0))  # until its heartbeat is stale
            record = await store.get_run(record.id)
    if record.status == "interrupted":
        log.info("run %s: taken up again from its checkpoints", record.id)
        return await runs.resume(record.id)
    log.info("run %s is %s: nothing to do for this delivery", record.id, record.status)
    return None


async def quarantine(store: Store, job: Job, count: int) -> None:
    """End the job's run `failed` (error `run_quarantined`): this is its delivery
    `count`; each before it ended with its worker dead."""
    record = await _find(store, job.run_id)
    if record is None or record.status in FINISHED_STATES:
        return
    error = {
        "code": "run_quarantined",
        "message": f"run {record.id} was delivered to a worker {count - 1} times and each "
        "time the worker stopped before the run ended (killed, out of memory, crashed); it "
        f"is not delivered again (the limit is NODELOOM_MAX_DELIVERIES={MAX_DELIVERIES}). "
        "Its record and checkpoints are kept: look at its last started node, fix the "
        "cause, and start it again",
    }
    log.error("run %s quarantined after %d deliveries", record.id, count)
    event = Event("run_failed", {"error": error}, run_id=record.id, seq=record.last_seq + 1)
    await store.write_batch(record.id, events=[event])
    await store.finish_run(record.id, "failed", error=error)


async def _find(store: Store, run_id: str) -> RunRecord | None:
    try:
        return await store.get_run(run_id)
    except NotFoundError:
        return None


def _owned_here(record: RunRecord) -> bool:
    return record.owner_pid == os.getpid() and record.owner_host == socket.gethostname()
