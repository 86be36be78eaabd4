"""What a running server holds: the store, the run service, the live channels, the runs
it executes in the background. Opened by the app's lifespan, closed at shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request

from nodeloom.engine.events import EventSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult
from nodeloom.plugins.registry import Registry
from nodeloom.runs import RunService
from nodeloom.server import python_tools
from nodeloom.server.broadcast import Broadcaster, Channel
from nodeloom.server.config import ServerConfig
from nodeloom.server.tokens import TokenStore
from nodeloom.store import Store

log = logging.getLogger("nodeloom.server")

Begin = Callable[[EventSink], Awaitable[RunResult]]


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

    def _ended(self, task: asyncio.Task[RunResult], channel: Channel) -> None:
        self._tasks.discard(task)
        channel.close()
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("run %s ended with an error: %s", channel.run_id, error)

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

    def flow(self, flow_id: str, version: int, document: dict[str, Any]) -> Flow:
        """The compiled flow of a saved version, from the run service's cache (versions
        never change: compiled once). Checked against the Python allow-list first: it
        may have been saved before the allow-list, or the list since narrowed."""
        return self.runs.flows.get(document, ("saved", flow_id, version), check=python_tools.check)

    async def aclose(self) -> None:
        await self.launcher.aclose()
        await self.runs.aclose()


def server_state(request: Request) -> ServerState:
    """The FastAPI dependency that hands a route the server's state."""
    state: ServerState = request.app.state.nodeloom
    return state


State = Annotated[ServerState, Depends(server_state)]
