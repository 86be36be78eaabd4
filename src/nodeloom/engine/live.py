"""The table of a process's live runs: which run, running or paused, and its execution.

One table knows a run: a recorded run is in its RunService's table (nodeloom.runs), an
unrecorded run of the Python API (`flow.run()`) in the table its Flow makes the first time
it is needed. See docs/python.md, "Who owns a live run".
"""

from __future__ import annotations

import asyncio
from typing import Any

from nodeloom.engine.execution import Execution
from nodeloom.engine.human import AnswerError
from nodeloom.engine.result import RunResult, RunStatus


class LiveRun:
    """A run of this process from its start (or resume) until it ends or is let go."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.execution: Execution | None = None  # once its arguments are checked
        self.task: asyncio.Task[RunResult] | None = None  # what runs it, while it runs
        self.paused = False
        self.cancelled = False  # cancelling was asked before it had a task
        self.handed_back = False  # stopped without ending: left resumable (a worker's stop)
        self.ended = asyncio.Event()  # set once it has ended and its end is recorded
        self.owner: Any = None  # what its table's owner keeps with it (a recorder, a flow)


class LiveRuns:
    def __init__(self) -> None:
        self._runs: dict[str, LiveRun] = {}

    def add(self, run_id: str) -> LiveRun:
        live = self._runs[run_id] = LiveRun(run_id)
        return live

    def get(self, run_id: str) -> LiveRun | None:
        return self._runs.get(run_id)

    def remove(self, live: LiveRun) -> None:
        """The run has ended here, or was let go: it is no longer live in this process."""
        if self._runs.get(live.run_id) is live:
            del self._runs[live.run_id]
        live.ended.set()

    def paused(self) -> list[str]:
        """Ids of the runs that wait for input."""
        return [run_id for run_id, live in self._runs.items() if live.paused]

    def running(self) -> list[str]:
        """Ids of the runs that run (not paused)."""
        return [run_id for run_id, live in self._runs.items() if not live.paused]

    def waiting(self, run_id: str) -> LiveRun:
        """The paused run `run_id`; AnswerError if it is not paused in this process."""
        live = self._runs.get(run_id)
        if live is None or not live.paused:
            paused = ", ".join(self.paused()) or "none"
            raise AnswerError(f"run '{run_id}' is not paused in this process; paused: {paused}")
        return live

    # -- unrecorded runs (a Flow's own table) ---------------------------------------------

    async def outcome(self, execution: Execution) -> RunResult:
        """Run `execution` until it ends (no longer live) or pauses (kept, paused). A run
        that cannot pause is never resumed nor cancelled through the table: it is not
        kept in it (nothing to look up, and no cost per run)."""
        if not execution.may_pause:
            return await execution.outcome()
        live = self.add(execution.run_id)
        live.execution = execution
        return await self._until_paused(live, execution.outcome(), resuming=False)

    async def resume(self, run_id: str, node: str, answer: Any) -> RunResult:
        """Answer a node of a paused run; AnswerError (it stays paused) if it cannot."""
        live = self.waiting(run_id)
        assert live.execution is not None
        live.paused = False
        try:
            outcome = live.execution.resume(node, answer)
            return await self._until_paused(live, outcome, resuming=True)
        except AnswerError:
            live.paused = True
            raise

    async def cancel(self, run_id: str) -> None:
        """End a paused run cancelled (`run_cancelled` is emitted)."""
        live = self.waiting(run_id)
        self.remove(live)
        assert live.execution is not None
        await live.execution.cancel()

    async def release(self, run_id: str) -> None:
        """Let go of a paused run without ending it (no event)."""
        live = self._runs.get(run_id)
        if live is not None and live.paused:
            self.remove(live)
            assert live.execution is not None
            await live.execution.release()

    async def aclose(self) -> None:
        """Let go of every paused run."""
        for run_id in self.paused():
            await self.release(run_id)

    async def _until_paused(self, live: LiveRun, outcome: Any, *, resuming: bool) -> RunResult:
        try:
            result: RunResult = await outcome
        except AnswerError:
            if not resuming:
                self.remove(live)
            raise  # a refused answer: the run is as it was
        except BaseException:
            self.remove(live)
            raise
        if result.status is RunStatus.PAUSED:
            live.paused = True
        else:
            self.remove(live)
        return result
