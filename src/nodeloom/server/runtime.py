"""What a running server holds: the store, the run service, the live channels, the runs
it executes in the background, and (started with --queue) the queue it hands launches to
instead. Opened by the app's lifespan, closed at shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request

from nodeloom.engine.events import EventSink, FanoutSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult
from nodeloom.fleet.jobs import Job, execute
from nodeloom.fleet.signals import RunSignals
from nodeloom.fleet.submit import Submitter
from nodeloom.plugins.registry import Registry
from nodeloom.runs import RunService
from nodeloom.server.broadcast import Broadcaster, Channel
from nodeloom.server.config import ServerConfig
from nodeloom.server.remote import follow
from nodeloom.server.tokens import TokenStore
from nodeloom.store import Store
from nodeloom.tools import allow_list as python_tools

log = logging.getLogger("nodeloom.server")

Begin = Callable[[EventSink], Awaitable[RunResult]]
Wrap = Callable[[Awaitable[RunResult]], Coroutine[Any, Any, RunResult]]


class Launcher:
    """Runs launches (start, resume, re-run) as background tasks, each with a Channel.
    Which run a launch runs, and whether it is live, is the RunService's to know."""

    def __init__(self, broadcaster: Broadcaster) -> None:
        self.broadcaster = broadcaster
        self._tasks: set[asyncio.Task[RunResult]] = set()

    async def launch(self, begin: Begin, run_id: str | None = None) -> str:
        """Start `begin(sink)` in the background and return its run id once the run has
        emitted its first event. If it ends first, its outcome (or its error: a run in the
        wrong state, an invalid trigger) is the answer."""
        channel = Channel(self.broadcaster, run_id)
        task = asyncio.create_task(begin(channel))
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._ended(done, channel))
        await asyncio.wait({task, channel.first}, return_when=asyncio.FIRST_COMPLETED)
        if channel.first.done() and not channel.first.cancelled():
            return channel.first.result().run_id
        return (await task).run_id

    def background(self, work: Coroutine[Any, Any, RunResult], run_id: str) -> None:
        """Run `work` (following a run a worker executes) until it ends or shutdown."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._ended(done, None, run_id))

    def _ended(
        self, task: asyncio.Task[RunResult], channel: Channel | None, run_id: str | None = None
    ) -> None:
        self._tasks.discard(task)
        if channel is not None:
            channel.close()
            run_id = channel.run_id
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("run %s ended with an error: %s", run_id, error)

    async def aclose(self) -> None:
        """Cancel the runs still going (they are recorded as cancelled)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class ServerState:
    config: ServerConfig
    store: Store
    registry: Registry
    runs: RunService
    tokens: TokenStore
    broadcaster: Broadcaster
    launcher: Launcher
    queue: Submitter | None = None  # started with --queue: launches go to workers
    signals: RunSignals | None = None  # Postgres: run changes from other processes

    async def submit(
        self,
        job: Job,
        *,
        flow: Flow | None = None,
        sink: EventSink | None = None,
        wrap: Wrap | None = None,
    ) -> str:
        """Launch `job`: executed here in the background (a Channel carries its events
        live), or with --queue recorded and enqueued for a worker. `sink` also gets the
        run's events (here: as emitted; queued: as written to the store); `wrap` is
        applied to the run's outcome (a chat turn keeps it). Returns the run's id once
        it has started here (an error before that is raised), or once it is enqueued."""
        if self.queue is not None:
            await self.queue.submit(job, flow)
            if sink is not None or wrap is not None:
                followed = follow(self.store, self.broadcaster, self.signals, job.run_id, sink)
                self.launcher.background(wrap(followed) if wrap else followed, job.run_id)
            return job.run_id

        def begin(channel: EventSink) -> Awaitable[RunResult]:
            both = channel if sink is None else FanoutSink(channel, sink)
            ran = execute(job, self.runs, both, flow=flow)
            return wrap(ran) if wrap is not None else ran

        # A resume's or re-run's channel joins on its first event: once it really runs.
        run_id = await self.launcher.launch(begin, job.run_id if job.kind == "start" else None)
        await self.runs.created(run_id)  # in the store (its first write, a few ms away)
        return run_id

    def flow(self, flow_id: str, version: int, document: dict[str, Any]) -> Flow:
        """The compiled flow of a saved version, from the run service's cache (versions
        never change: compiled once). Checked against the Python allow-list first: it
        may have been saved before the allow-list, or the list since narrowed."""
        return self.runs.flows.get(document, ("saved", flow_id, version), check=python_tools.check)

    async def aclose(self) -> None:
        await self.launcher.aclose()
        if self.signals is not None:
            await self.signals.aclose()
        if self.queue is not None:
            self.queue.close()
        await self.runs.aclose()


async def server_state(request: Request) -> ServerState:
    """The FastAPI dependency that hands a route the server's state (async: FastAPI runs
    a plain function dependency in a worker thread, a hop per request)."""
    state: ServerState = request.app.state.nodeloom
    return state


State = Annotated[ServerState, Depends(server_state)]
