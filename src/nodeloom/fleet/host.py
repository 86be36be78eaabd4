"""What one worker process holds on its event loop: the Postgres store, its run service,
the LISTEN connection (cancels reach it at once), and the sweeper that enqueues again
runs left `queued` and resume or re-run jobs left in the outbox (their message was lost,
e.g. Redis restarted without its data).

A resume or re-run job is taken by deleting its outbox row, before anything is run: of
two copies of a job (one enqueued again by a sweep) only the first delivery that deletes
the row runs it; a later one finds no row and does nothing (so a resume applies its
answers once, even to a run that has paused again since). A delivery after the taker
died (Dramatiq's redelivery: its count > 1) runs as the delivery table says
(nodeloom.fleet.delivery): the run's record settles it.

Dramatiq's worker threads hand each job to `handle` on the AsyncIO middleware's loop, so
`--concurrency` jobs run at once per process, all on one loop and one store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from nodeloom.engine.result import RunResult
from nodeloom.errors import NodeloomError
from nodeloom.fleet.delivery import MAX_DELIVERIES, Deliveries, deliver, quarantine
from nodeloom.fleet.jobs import Job
from nodeloom.fleet.service import WorkerRuns
from nodeloom.fleet.signals import RunSignals
from nodeloom.observability.fleet import WorkerBeat
from nodeloom.observability.metrics import RunMetrics
from nodeloom.runs.recorder import HEARTBEAT_SECONDS
from nodeloom.store import Store, StoreUnavailableError
from nodeloom.tools import allow_list

log = logging.getLogger("nodeloom.fleet")

BACKOFF_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
SWEEP_SECONDS = float(os.environ.get("NODELOOM_SWEEP_SECONDS", 30.0))


class WorkerHost:
    """`enqueue(job)` puts a job on the queue (blocking; called in a thread)."""

    def __init__(
        self,
        database_url: str | None,
        enqueue: Callable[[Job], None],
        deliveries: Deliveries,
        depth: Callable[[], int],
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        concurrency: int = 1,
    ) -> None:
        self.database_url = database_url
        self.enqueue = enqueue
        self.deliveries = deliveries
        self.depth = depth
        self.heartbeat = heartbeat
        self.store: Store | None = None
        self.runs: WorkerRuns | None = None
        self.signals: RunSignals | None = None
        self.stopping = False
        self.taken: set[str] = set()  # the runs of the jobs being handled here
        self.drained: set[str] = set()  # those asked to drain
        self._sweeper: asyncio.Task[None] | None = None
        self.on_job: Callable[[str, str], None] | None = None  # hook: (event, run_id)
        self.concurrency = concurrency
        self.metrics: RunMetrics | None = None
        self.beat: WorkerBeat | None = None  # this process's row in the worker registry

    async def open(self) -> None:
        """Open the store, waiting (with back-off) while Postgres is unreachable."""
        self.store = await _retrying("open the run store", lambda: Store.open(self.database_url))
        self.metrics = RunMetrics()
        # woken: a long Wait lets go of its run; the servers' timer service enqueues its wake
        self.runs = WorkerRuns(
            self.store,
            heartbeat=self.heartbeat,
            observer=self.metrics,
            woken=True,
            check=allow_list.check,  # a child run's flow, as a server vets what it enqueues
        )
        allow_list.enforce()  # and at import, as in the server (docs/security.md)
        self.beat = WorkerBeat(
            self.store,
            role="worker",
            concurrency=self.concurrency,
            load=lambda: len(self.runs.running()) if self.runs else 0,
            metrics=self.metrics,
        )
        await _retrying("join the worker registry", self.beat.start)
        if self.store.listen_url is not None:
            self.signals = RunSignals(self.store.listen_url, on_cancel=self._cancel_asked)
            await self.signals.start()
        self._sweeper = asyncio.create_task(self._sweep())

    async def aclose(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        if self.signals is not None:
            await self.signals.aclose()
        if self.runs is not None:
            await self.runs.aclose()
            allow_list.enforce(False)
        if self.beat is not None:
            with contextlib.suppress(Exception):  # the row goes stale: seen as gone
                await self.beat.stop()
        with contextlib.suppress(Exception):  # Redis away: the counts expire (their TTL)
            await asyncio.to_thread(self.deliveries.flush)
        if self.store is not None:
            await self.store.close()

    # -- one job ----------------------------------------------------------------------------

    def handle(self, payload: Any, on_loop: Callable[[Any], Any]) -> None:
        """The actor, in one of Dramatiq's worker threads: run one delivered job on the
        loop (`on_loop(coroutine)` returns its result). Returns (the message is
        acknowledged) once the run has ended, paused, been handed back or found to need
        nothing; while the store is unreachable it waits and tries again (nothing is
        marked failed for it). The delivery count is kept in this thread: Redis's client
        blocks, and here it blocks no one (no hop to another thread and back per job)."""
        try:
            job = Job.from_json(payload)
        except (TypeError, ValueError) as exc:
            log.error("dropped a message that is not a job: %s", exc)
            return
        try:
            if self.stopping:  # taken as this worker stops: not counted, not run; another runs it
                log.info("job %s of run %s: enqueued again (stopping)", job.kind, job.run_id)
                self.enqueue(job)
                return
            count = self.deliveries.count(job.job_id)
            if on_loop(self._handle(job, count)):
                log.info("run %s: handed back; its resume is enqueued", job.run_id)
                resume = Job.resume(job.run_id)
                on_loop(self._record(resume))
                self.enqueue(resume)
            self.deliveries.done(job.job_id)
        except Exception:  # a bug: say so; the run stays as recorded (a sweep or a resume)
            log.exception("job %s of run %s failed", job.kind, job.run_id)

    async def _handle(self, job: Job, count: int) -> bool:
        """Run the job (its delivery `count`); True if its run was handed back (its
        resume is to be enqueued)."""
        assert self.runs is not None
        if job.kind != "start" and not await self._take(job) and count == 1:
            log.info(
                "job %s of run %s: taken already (a copy); nothing to do", job.kind, job.run_id
            )
            return False
        if count > MAX_DELIVERIES:
            await _retrying("quarantine", lambda: quarantine(self.runs.store, job, count))
            return False
        self._hook("taken", job.run_id)
        self.taken.add(job.run_id)
        try:
            result = await self._deliver(job, count)
        finally:
            self.taken.discard(job.run_id)
        self._hook("done", job.run_id)
        return result is not None and (result.error or {}).get("code") == "handed_back"

    async def _take(self, job: Job) -> bool:
        """Delete the job's outbox row: True if this delivery took it."""
        assert self.store is not None
        store = self.store
        return bool(await _retrying("take the job", lambda: store.take_pending_job(job.job_id)))

    async def _record(self, job: Job) -> None:
        """Record a job this worker enqueues (a handed-back run's resume) in the outbox."""
        assert self.store is not None
        try:
            await self.store.add_pending_job(job.job_id, job.run_id, job.kind, job.to_json())
        except Exception as exc:  # the store is away: enqueued anyway (Redis may keep it)
            log.warning("run %s: its resume is not in the outbox: %s", job.run_id, exc)

    async def _deliver(self, job: Job, count: int) -> RunResult | None:
        assert self.runs is not None
        failures = 0
        while True:
            try:
                return await deliver(job, self.runs, count)
            except StoreUnavailableError as exc:
                delay = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
                log.warning(
                    "run %s: the store is unreachable (%s); again in %gs", job.run_id, exc, delay
                )
                failures += 1
                count = 2  # taken up again: the run may be half done
                await asyncio.sleep(delay)
            except NodeloomError as exc:  # a run in another state, unknown, invalid
                log.warning("job %s of run %s was not run: %s", job.kind, job.run_id, exc)
                return None

    # -- stopping ---------------------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Stop: the runs taken here start no more nodes, and are handed back once their
        running nodes have finished (recorded `interrupted`, resumable; `handle` enqueues
        their resume) or end if nothing was left. A run still running nodes after `grace`
        seconds is handed back at once: those nodes are cancelled (run again on resume).
        A child run (a node's sub-flow) is not drained: it is part of a running node."""
        assert self.runs is not None
        self.stopping = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while (self.runs.running() or self.taken) and loop.time() < deadline:
            for run_id in self.taken - self.drained:  # again: a run's execution is made late
                if self.runs.drain(run_id):
                    self.drained.add(run_id)
            await asyncio.sleep(0.05)
        for run_id in self.runs.running():
            log.info("run %s: handed back (the grace period is over)", run_id)
            await self.runs.hand_back(run_id)

    # -- across processes -----------------------------------------------------------------

    def _cancel_asked(self, run_id: str) -> None:
        """A cancel was asked (NOTIFY): if the run runs here, cancel it now."""
        if self.runs is not None and run_id in self.runs.running():
            asyncio.get_running_loop().create_task(self.runs.cancels.check([run_id]))

    async def _sweep(self) -> None:
        """Every SWEEP_SECONDS, enqueue again what was recorded and not taken for that
        long: a run left `queued`, a resume or re-run job left in the outbox (its message
        was lost). A run enqueued twice still runs once (its claim succeeds once); a job
        enqueued twice runs once (its row is deleted once)."""
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep()
            except Exception as exc:
                log.warning("sweep: %s", exc)

    async def sweep(self) -> list[Job]:
        """One sweep; returns the jobs it enqueued again. Nothing when the queue holds at
        least as many jobs as were found (a backlog: their messages are, or may well be,
        on the queue)."""
        assert self.store is not None
        queued = await self.store.list_runs(status=["queued"], limit=1000)
        pending = await self.store.pending_jobs(older_than=SWEEP_SECONDS, limit=1000)
        cutoff = datetime.now(UTC) - timedelta(seconds=SWEEP_SECONDS)
        stale = [Job.start(r.id) for r in queued if _aware(r.created_at) < cutoff]
        for row in pending:
            try:
                stale.append(Job.from_json(row.payload))
            except (TypeError, ValueError) as exc:  # dropped, said once
                log.error("outbox job %s of run %s is not a job: %s", row.job_id, row.run_id, exc)
                await self.store.take_pending_job(row.job_id)
        if not stale or await asyncio.to_thread(self.depth) >= len(stale):
            return []
        for job in stale:
            log.info("job %s of run %s: not taken yet; enqueued again", job.kind, job.run_id)
            await asyncio.to_thread(self.enqueue, job)
        return stale

    def _hook(self, event: str, run_id: str) -> None:
        if self.on_job is not None:  # the worker registry / metrics (operations) hook here
            self.on_job(event, run_id)


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


async def _retrying(what: str, attempt: Callable[[], Any]) -> Any:
    failures = 0
    while True:
        try:
            return await attempt()
        except StoreUnavailableError as exc:
            delay = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
            log.warning("cannot %s (%s); again in %gs", what, exc, delay)
            failures += 1
            await asyncio.sleep(delay)
