"""Recorded runs (start, resume in any process, re-run, cancel), for CLI, server, workers.

async with await Store.open() as store:
    runs = RunService(store)
    result = await runs.start(nodeloom.load("flow.json"), "hello")
    result = await runs.resume(result.run_id, answers={"Approve": "yes"})  # anywhere
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from nodeloom.engine.checkpoint import Continuation
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import EventSink, FanoutSink
from nodeloom.engine.failures import handed_back
from nodeloom.engine.flow import Flow, trigger_data
from nodeloom.engine.human import AnswerError
from nodeloom.engine.live import LiveRun, LiveRuns
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError
from nodeloom.observability.logs import LOG_CONTEXT
from nodeloom.plugins.registry import Registry, default_registry
from nodeloom.runs.cancels import RESUMABLE, CancelWatch, cancel_elsewhere
from nodeloom.runs.flows import FlowCache, invalid, rerun_arguments, stored_settings
from nodeloom.runs.history import History
from nodeloom.runs.recorder import HEARTBEAT_SECONDS, Recorder
from nodeloom.runs.subflows import Subflows
from nodeloom.runs.tasks import end, ended, execution, pause, unrecorded
from nodeloom.runs.timers import deadlines_of
from nodeloom.store import RunRecord, RunStateError, Store
from nodeloom.store.creation import NewRun


class RunService:
    """The one owner of a process's recorded runs (docs/python.md, "Who owns a live run"):
    which run is live here (running, or paused and held for an answer), its execution and
    recorder, the compiled flows (`flows`), child runs (`subflows`; `check` vets a saved
    flow first), the one poller of cancels asked elsewhere. `observer` sees every event of
    every run here (a RunMetrics; each run's events also set the log's run and node ids);
    `woken`: a timer service wakes paused runs' deadlines, so a long Wait lets go its run."""

    def __init__(
        self,
        store: Store,
        registry: Registry | None = None,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        observer: EventSink | None = None,
        woken: bool = False,
        check: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.store = store
        self.woken = woken  # a timer service wakes paused runs' deadlines (the server)
        self.registry = registry or default_registry()
        self.heartbeat = heartbeat
        self.observer = observer
        self.flows = FlowCache(self.registry, store.binaries)  # binaries: its blob area
        self.subflows = self.flows.subflows = Subflows(store, self.flows, self.start, check)
        self.live = LiveRuns()
        self.cancels = CancelWatch(store, self.live, heartbeat=heartbeat)  # + runs' heartbeat
        self._sinks = (LOG_CONTEXT, *([observer] if observer is not None else []))
        self._sink = FanoutSink(*self._sinks)  # a run's sink when it is given none
        self._on_store_failure = self._store_failed  # one bound method, shared by all runs

    def paused(self) -> list[str]:
        """Ids of the paused runs held open here (answered without replaying)."""
        return self.live.paused()

    def running(self) -> list[str]:
        """Ids of the runs running in this process."""
        return self.live.running()

    async def aclose(self) -> None:
        """Let go of held paused runs (they stay paused in the store) and close flows."""
        await self.cancels.aclose()
        for run_id in self.live.paused():
            await self._let_go(run_id)
        await self.flows.aclose()

    # -- starting -------------------------------------------------------------------------

    async def start(
        self,
        flow: Flow,
        message: Any = None,
        *,
        trigger: Mapping[str, Any] | None = None,
        sink: EventSink | None = None,
        settings: RunSettings | None = None,
        chat_id: str | None = None,
        run_id: str | None = None,
        flow_id: str | None = None,
        flow_version: int | None = None,
        answers: Mapping[str, Any] | None = None,
        target: str | None = None,
        from_node: str | None = None,
        outputs: Mapping[str, Mapping[str, Any]] | None = None,
        hold: bool = False,
        parent_run_id: str | None = None,
        parent_node: str | None = None,
    ) -> RunResult:
        """Run `flow` once, recorded. Arguments as `Flow.run`. A paused run is saved as
        paused; with `hold` it also stays open here, for `answer()`. A child run names
        the run and node that started it (`parent_run_id`, `parent_node`). Its first
        write creates it (`created`). ValueError if `run_id` is taken."""
        if flow.document is None:
            raise ValueError("a recorded run needs a flow made by nodeloom.load()")
        if run_id is not None and self.live.get(run_id) is not None:
            raise ValueError(f"a run with id {run_id!r} already exists")
        settings = settings or flow.default_settings()
        flow.check_answers(answers or {})  # invalid input: no run is recorded
        if parent_run_id is not None:  # the child's depth is read from the store
            await self.created(parent_run_id)
        new = await self.store.prepare_run(
            run_id=run_id,
            flow_id=flow_id,
            flow_version=flow_version,
            document=None if flow_id is not None else flow.document,
            trigger=trigger_data(message, trigger),
            chat_id=chat_id,
            settings=asdict(settings),
            parent_run_id=parent_run_id,
            parent_node=parent_node,
        )
        return await self._execute(
            flow,
            new.record,
            sink,
            hold=hold,
            created=new,
            message=message,
            trigger=trigger,
            settings=settings,
            answers=answers,
            target=target,
            from_node=from_node,
            outputs=outputs,
        )

    # -- taking a run up again ------------------------------------------------------------

    async def resume(
        self,
        run_id: str,
        *,
        answers: Mapping[str, Any] | None = None,
        replay_external: bool = False,
        sink: EventSink | None = None,
        hold: bool = False,
    ) -> RunResult:
        """Continue a paused or interrupted run from its record, in this process: nodes
        on record as finished are not run again; `answers` go to waiting nodes. Raises
        RunStateError if the run is neither paused nor interrupted (a run whose process
        died is found first, see `Store.find_interrupted`)."""
        await self._let_go(run_id)
        record = await self.store.get_run(run_id)
        if record.status == "running":  # its process may have died: find out
            await self.store.find_interrupted()
            record = await self.store.get_run(run_id)
        before = record.status
        record = await self.store.claim_run(run_id, states=RESUMABLE)
        try:
            flow = await self.flow_of(record)
            for ref in answers or {}:
                flow.check_node(ref.split("/")[0], "answered")
            flow.check_answers(answers or {})  # the run stays as it was
            history = History(await self.store.node_executions(run_id))
            extra = await rerun_arguments(self.store, record, flow)
        except BaseException:
            await self.store.update_run(run_id, status=before)
            raise
        return await self._execute(
            flow,
            record,
            sink,
            hold=hold,
            history=history,
            continuation=Continuation(
                record.last_seq, before, replay_external, await deadlines_of(self.store, run_id)
            ),
            answers=answers,
            settings=stored_settings(record),
            trigger=record.trigger,
            **extra,
        )

    async def rerun(
        self,
        run_id: str,
        from_node: str,
        *,
        sink: EventSink | None = None,
        hold: bool = False,
        new_run_id: str | None = None,
    ) -> RunResult:
        """A new run (id `new_run_id`, default a fresh one) of the same document and
        trigger that runs `from_node` and what follows it, taking every other node's
        outputs from the run `run_id`."""
        original = await self.store.get_run(run_id)
        flow = await self.flow_of(original)
        flow.check_node(from_node, "from")
        record = await self.store.create_run(
            run_id=new_run_id,
            flow_id=original.flow_id,
            flow_version=original.flow_version,
            document=None if original.flow_id is not None else flow.document,
            trigger=original.trigger,
            chat_id=original.chat_id,
            settings=original.settings,
            rerun_of=run_id,
            rerun_from=from_node,
        )
        try:
            extra = await rerun_arguments(self.store, record, flow)
        except GraphError as exc:
            await self.store.finish_run(record.id, "failed", error=invalid(exc))
            raise
        return await self._execute(
            flow,
            record,
            sink,
            hold=hold,
            settings=stored_settings(record),
            trigger=record.trigger,
            **extra,
        )

    async def created(self, run_id: str) -> None:
        """Wait until a run started here is in the store (its creation rides its first
        write, a few ms after its start: no write is added). Raises the store's error if
        that write failed (ValueError: its id was taken)."""
        live = self.live.get(run_id)
        if live is not None and isinstance(live.owner, Recorder):
            await live.owner.wait_created()

    async def answer(self, run_id: str, node: str, answer: Any) -> RunResult:
        """Answer one waiting node of a paused run (id or name): in this process if the
        run is held here, else by resuming it from its record."""
        live = self.live.get(run_id)
        if live is None or not live.paused:
            return await self.resume(run_id, answers={node: answer})
        result = await self._answer_held(live, node, answer)
        await self.subflows.after_run(run_id, result)
        return result

    async def cancel(self, run_id: str) -> RunRecord:
        """Cancel a run. Paused or interrupted: ended now. Running here: cancelled now.
        Running in another process: that process is asked to (it checks with each
        heartbeat). Raises RunStateError for a run that has ended."""
        live = self.live.get(run_id)
        if live is not None and not live.paused:
            live.cancelled = True
            if live.task is not None:
                live.task.cancel()
            await live.ended.wait()  # until its end is recorded
            return await self.store.get_run(run_id)
        if live is not None:  # paused, held here
            self.live.remove(live)
            await self.store.claim_run(run_id, states=("paused",))
            assert live.execution is not None
            await live.execution.cancel()
            await live.owner.close()
            return await self.store.finish_run(run_id, "cancelled")
        return await cancel_elsewhere(self.store, run_id, self.observer)

    # -- running --------------------------------------------------------------------------

    async def _execute(
        self,
        flow: Flow,
        record: RunRecord,
        sink: EventSink | None,
        *,
        hold: bool,
        history: History | None = None,
        created: NewRun | None = None,
        **arguments: Any,
    ) -> RunResult:
        live = self.live.add(record.id)
        recorder = Recorder(
            self.store,
            record.id,
            sink=self._sink if sink is None else FanoutSink(LOG_CONTEXT, sink, *self._sinks[1:]),
            history=history,
            heartbeat=0,  # the service's poller beats for all its runs (runs/cancels.py)
            on_failure=self._on_store_failure,  # no cycle per run
            created=created,  # written with its first records
        )
        recorder.woken = self.woken
        live.owner = recorder
        try:  # made here, not in the task: one coroutine less per run in flight
            live.execution = execution(flow, record, recorder, self.subflows, arguments)
        except BaseException as exc:  # invalid arguments: the run ends now, failed
            try:
                if isinstance(exc, GraphError):
                    await end(self.store, recorder, record.id, "failed", error=invalid(exc))
                else:
                    await recorder.close_quietly()
            finally:
                self.live.remove(live)  # once its end is recorded
            raise
        live.task = asyncio.create_task(live.execution.outcome())
        if live.cancelled:  # asked before it had a task
            live.task.cancel()
        self.cancels.wake()
        result = await self._outcome(live, hold)
        await self.subflows.after_run(record.id, result, flow)
        return result

    async def _outcome(self, live: LiveRun, hold: bool, resuming: bool = False) -> RunResult:
        """Wait for the run's task and record how it ended (or that it paused). The run
        stays live here while paused and held, else it ends here (`live.ended`)."""
        try:
            return await self._record_outcome(live, hold)
        except AnswerError:
            live.paused = resuming  # a refused answer: the run waits as it did
            raise
        finally:
            if not live.paused:
                self.live.remove(live)

    async def _record_outcome(self, live: LiveRun, hold: bool) -> RunResult:
        run_id, recorder, task = live.run_id, live.owner, live.task
        assert task is not None
        try:
            await ended(task)  # as `asyncio.shield(task)`: a cancelled caller leaves it
            result = task.result()
        except asyncio.CancelledError:
            if not task.done():  # the caller was cancelled: cancel the run
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            result = RunResult(
                run_id,
                RunStatus.CANCELLED,
                error={"code": "cancelled", "message": "the run was cancelled"},
            )
        except GraphError as exc:
            await end(self.store, recorder, run_id, "failed", error=invalid(exc))
            raise
        finally:
            live.task = None
        if live.handed_back or (live.execution is not None and live.execution.drained):
            await end(self.store, recorder, run_id, "interrupted", error=handed_back())
            return RunResult(run_id, RunStatus.CANCELLED, error=handed_back())
        if recorder.error is not None:
            if live.execution is not None:
                await live.execution.release()
            raise await unrecorded(self.store, recorder, run_id)
        if result.status is RunStatus.PAUSED:
            await pause(self.store, live, result, hold)
            return result
        await end(  # its last records and its end (and creation): one write
            self.store,
            recorder,
            run_id,
            result.status.value,
            error=result.error,
            usage=result.usage,
            steps=result.steps,  # duration: from its start, across pauses and resumes
        )
        return result

    async def _answer_held(self, live: LiveRun, node: str, answer: Any) -> RunResult:
        await self.store.claim_run(live.run_id, states=("paused",))
        assert live.execution is not None
        live.paused = False
        live.task = asyncio.create_task(live.execution.resume(node, answer))
        self.cancels.wake()
        try:
            return await self._outcome(live, True, resuming=True)
        except AnswerError:  # the node keeps waiting
            await self.store.update_run(live.run_id, status="paused")
            raise

    async def _let_go(self, run_id: str) -> None:
        live = self.live.get(run_id)
        if live is not None and live.paused:
            self.live.remove(live)
            assert live.execution is not None
            await live.execution.release()
            await live.owner.close_quietly()

    # -- what a recorded run needs --------------------------------------------------------

    def _store_failed(self, run_id: str, _error: BaseException) -> None:
        live = self.live.get(run_id)
        if live is not None and live.task is not None:  # the store failed: the run stops
            live.task.cancel()

    async def flow_of(self, record: RunRecord) -> Flow:
        """The (cached) Flow of the document a recorded run ran."""
        return await self.flows.of(self.store, record)


__all__ = ["RESUMABLE", "RunService", "RunStateError"]
