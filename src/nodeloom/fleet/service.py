"""The run service of a worker: a RunService that can also run a run a server recorded
as `queued`, and, when the worker stops, drain a run (start no more of its nodes) and
hand it back (stop it without ending it)."""

from __future__ import annotations

import weakref

from nodeloom.engine.events import EventSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult
from nodeloom.errors import GraphError
from nodeloom.runs import RunService
from nodeloom.runs.flows import invalid, stored_settings
from nodeloom.store import RunRecord


class WorkerRuns(RunService):
    async def flow_of(self, record: RunRecord) -> Flow:
        """The run's flow, vetted against the Python allow-list (`check`) here too: the
        list may have narrowed since a server enqueued the run. Once per compiled flow:
        the list is this process's, fixed when it started."""
        flow = await super().flow_of(record)
        if self.subflows.check is not None and flow.document is not None:
            vetted = self.__dict__.setdefault("_vetted", weakref.WeakSet())
            if flow not in vetted:
                self.subflows.check(flow.document)
                vetted.add(flow)
        return flow

    async def start_queued(self, run_id: str, *, sink: EventSink | None = None) -> RunResult:
        """Run here a run recorded `queued`: claimed (of several claims at once exactly
        one succeeds; RunStateError for the others), then run with its record's flow,
        trigger and settings. Never held when it pauses: an answer enqueues a resume."""
        record = await self.store.claim_run(run_id, states=("queued",))
        try:
            flow = await self.flow_of(record)
        except GraphError as exc:
            await self.store.finish_run(run_id, "failed", error=invalid(exc))
            raise
        return await self._execute(
            flow,
            record,
            sink,
            hold=False,
            trigger=record.trigger,
            settings=stored_settings(record),
        )

    def drain(self, run_id: str) -> bool:
        """Start no more nodes of a run running here: its running nodes finish (their ends
        checkpointed), then it is recorded `interrupted` (error `handed_back`, resumable:
        the nodes that did not start run where it is resumed), or `completed` if nothing
        was left. False if it does not run here (yet: its execution is being made)."""
        live = self.live.get(run_id)
        if live is None or live.paused or live.execution is None:
            return False
        live.execution.drain()
        return True

    async def hand_back(self, run_id: str) -> None:
        """Stop a run running here without ending it: its running nodes are cancelled,
        no event is emitted, and it is recorded `interrupted` (error `handed_back`), to
        be resumed from its checkpoints in any process."""
        live = self.live.get(run_id)
        if live is None or live.paused or live.execution is None:
            return
        live.handed_back = True
        await live.execution.release()  # muted; cancelled if it runs in a task of its own
        if live.task is not None:  # else it runs in the service's task: cancel that
            live.task.cancel()
        await live.ended.wait()
