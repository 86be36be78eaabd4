"""Recorded runs: start, resume (after a pause or a crash, in any process), re-run from a
node, cancel. The CLI's `nodeloom run` / `nodeloom runs` and the server use this.

    async with await Store.open() as store:
        runs = RunService(store)
        result = await runs.start(nodeloom.load("flow.json"), "hello")
        # ...later, maybe in another process:
        result = await runs.resume(result.run_id, answers={"Approve": "yes"})
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from nodeloom.engine.checkpoint import Continuation, apply_delta
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import EventSink, NullSink
from nodeloom.engine.flow import Flow, load, trigger_data
from nodeloom.engine.human import AnswerError
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.plugins.contract import Event
from nodeloom.plugins.registry import Registry, default_registry
from nodeloom.runs.history import History
from nodeloom.runs.recorder import HEARTBEAT_SECONDS, Recorder
from nodeloom.store import RunRecord, RunStateError, Store

RESUMABLE = ("paused", "interrupted")


class _Held:
    """A paused run kept in this process (its execution and recorder stay open), so that
    an answer given here continues it without replaying."""

    def __init__(self, flow: Flow, recorder: Recorder) -> None:
        self.flow = flow
        self.recorder = recorder


class RunService:
    def __init__(
        self,
        store: Store,
        registry: Registry | None = None,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> None:
        self.store = store
        self.registry = registry or default_registry()
        self.heartbeat = heartbeat
        self._flows: dict[str, Flow] = {}  # by document hash: compiled once per process
        self._held: dict[str, _Held] = {}
        self._live: dict[str, asyncio.Task[RunResult]] = {}
        self._ended: dict[str, asyncio.Event] = {}  # set once a live run's end is recorded

    async def aclose(self) -> None:
        """Let go of held paused runs (they stay paused in the store) and close flows."""
        for run_id in list(self._held):
            await self._let_go(run_id)
        for flow in self._flows.values():
            await flow.aclose()
        self._flows.clear()

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
    ) -> RunResult:
        """Run `flow` once, recorded. Arguments as `Flow.run`. A paused run is saved as
        paused; with `hold` it also stays open here, for `answer()`."""
        if flow.document is None:
            raise ValueError("a recorded run needs a flow made by nodeloom.load()")
        settings = settings or flow.default_settings()
        flow.check_answers(answers or {})  # invalid input: no run is recorded
        record = await self.store.create_run(
            run_id=run_id,
            flow_id=flow_id,
            flow_version=flow_version,
            document=None if flow_id is not None else flow.document,
            trigger=trigger_data(message, trigger),
            chat_id=chat_id,
            settings=asdict(settings),
        )
        return await self._execute(
            flow,
            record,
            sink,
            hold=hold,
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
            extra = await self._rerun_arguments(record, flow)
        except BaseException:
            await self.store.update_run(run_id, status=before)
            raise
        return await self._execute(
            flow,
            record,
            sink,
            hold=hold,
            history=history,
            continuation=Continuation(record.last_seq, before, replay_external),
            answers=answers,
            settings=_settings(record),
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
            extra = await self._rerun_arguments(record, flow)
        except GraphError as exc:
            await self.store.finish_run(record.id, "failed", error=_invalid(exc))
            raise
        return await self._execute(
            flow,
            record,
            sink,
            hold=hold,
            settings=_settings(record),
            trigger=record.trigger,
            **extra,
        )

    async def answer(self, run_id: str, node: str, answer: Any) -> RunResult:
        """Answer one waiting node of a paused run (id or name): in this process if the
        run is held here, else by resuming it from its record."""
        if run_id in self._held:
            return await self._answer_held(run_id, node, answer)
        return await self.resume(run_id, answers={node: answer})

    async def cancel(self, run_id: str) -> RunRecord:
        """Cancel a run. Paused or interrupted: ended now. Running here: cancelled now.
        Running in another process: that process is asked to (it checks with each
        heartbeat). Raises RunStateError for a run that has ended."""
        task = self._live.get(run_id)
        if task is not None:
            ended = self._ended[run_id]
            task.cancel()
            await ended.wait()  # until its end is recorded
            return await self.store.get_run(run_id)
        if run_id in self._held:
            held = self._held.pop(run_id)
            await self.store.claim_run(run_id, states=("paused",))
            await held.flow.cancel(run_id)
            await held.recorder.close()
            return await self.store.finish_run(run_id, "cancelled")
        record = await self.store.get_run(run_id)
        if record.status == "running":
            await self.store.find_interrupted()
            record = await self.store.get_run(run_id)
        if record.status == "running":
            return await self.store.request_cancel(run_id)
        if record.status not in RESUMABLE:
            raise RunStateError(run_id, record.status, ("running", *RESUMABLE), "cancelled")
        record = await self.store.claim_run(run_id, states=RESUMABLE)
        event = Event("run_cancelled", {"duration_ms": 0.0}, run_id=run_id, seq=record.last_seq + 1)
        await self.store.write_batch(run_id, events=[event])
        return await self.store.finish_run(run_id, "cancelled")

    # -- running --------------------------------------------------------------------------

    async def _execute(
        self,
        flow: Flow,
        record: RunRecord,
        sink: EventSink | None,
        *,
        hold: bool,
        history: History | None = None,
        **arguments: Any,
    ) -> RunResult:
        run_id = record.id
        task: asyncio.Task[RunResult] | None = None

        def cancel() -> None:
            if task is not None:
                task.cancel()

        recorder = Recorder(
            self.store,
            run_id,
            sink=sink or NullSink(),
            history=history,
            heartbeat=self.heartbeat,
            on_cancel=cancel,
            on_failure=lambda _: cancel(),
        )
        await recorder.__aenter__()
        task = asyncio.create_task(
            flow.run(
                run_id=run_id,
                chat_id=record.chat_id,
                sink=recorder,
                checkpoints=recorder,
                **arguments,
            )
        )
        return await self._outcome(run_id, flow, recorder, task, hold)

    async def _outcome(
        self,
        run_id: str,
        flow: Flow,
        recorder: Recorder,
        task: asyncio.Task[RunResult],
        hold: bool,
    ) -> RunResult:
        ended = self._ended.setdefault(run_id, asyncio.Event())
        try:
            return await self._record_outcome(run_id, flow, recorder, task, hold)
        finally:
            ended.set()
            del self._ended[run_id]

    async def _record_outcome(
        self,
        run_id: str,
        flow: Flow,
        recorder: Recorder,
        task: asyncio.Task[RunResult],
        hold: bool,
    ) -> RunResult:
        self._live[run_id] = task
        try:
            result = await asyncio.shield(task)
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
            await self._close(recorder)
            await self.store.finish_run(run_id, "failed", error=_invalid(exc))
            raise
        finally:
            self._live.pop(run_id, None)
        if recorder.error is not None:
            await flow.release(run_id)
            await self._close(recorder)
            await self.store.finish_run(
                run_id,
                "interrupted",
                error={"code": "store_failed", "message": str(recorder.error)},
            )
            raise recorder.error
        if result.status is RunStatus.PAUSED:
            await recorder.flush()
            await self.store.update_run(run_id, status="paused", steps=result.steps)
            if hold:
                self._held[run_id] = _Held(flow, recorder)
            else:
                await flow.release(run_id)
                await self._close(recorder)
            return result
        await self._close(recorder)
        await self.store.finish_run(
            run_id,
            result.status.value,
            error=result.error,
            usage=result.usage,
            steps=result.steps,  # duration: from its start, across pauses and resumes
        )
        return result

    async def _answer_held(self, run_id: str, node: str, answer: Any) -> RunResult:
        held = self._held.pop(run_id)
        await self.store.claim_run(run_id, states=("paused",))
        task = asyncio.create_task(held.flow.resume(run_id, node, answer))
        try:
            return await self._outcome(run_id, held.flow, held.recorder, task, True)
        except AnswerError:  # the node keeps waiting
            await self.store.update_run(run_id, status="paused")
            self._held[run_id] = held
            raise

    async def _let_go(self, run_id: str) -> None:
        held = self._held.pop(run_id, None)
        if held is not None:
            await held.flow.release(run_id)
            await self._close(held.recorder)

    async def _close(self, recorder: Recorder) -> None:
        with contextlib.suppress(Exception):  # the caller reports recorder.error
            await recorder.close()

    # -- what a recorded run needs --------------------------------------------------------

    async def flow_of(self, record: RunRecord) -> Flow:
        """The (cached) Flow of the document a recorded run ran."""
        if record.flow_id is not None:
            version = await self.store.get_flow(
                record.flow_id, record.flow_version, include_deleted=True
            )
            document = version.document
        else:
            document = await self.store.run_document(record.id)
        if document is None:
            raise GraphError(
                [Issue("invalid_request", f"run {record.id} has no recorded graph document")]
            )
        key = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
        flow = self._flows.get(key)
        if flow is None:
            flow = self._flows[key] = load(document, registry=self.registry)
        return flow

    async def _rerun_arguments(self, record: RunRecord, flow: Flow) -> dict[str, Any]:
        """A re-run: the stored outputs of the original run's nodes, and the shared state
        they left. Empty for other runs."""
        if record.rerun_of is None or record.rerun_from is None:
            return {}
        rows = await self.store.node_executions(record.rerun_of)
        outputs: dict[str, dict[str, Any]] = {}
        state: dict[str, Any] = {}
        start = flow.plan.names.get(record.rerun_from)
        running = flow.plan.descendants(start) | {start} if start is not None else set[int]()
        for row in rows:  # in the order they started
            index = flow.plan.names.get(row.node_id)
            if "/" in row.node_id or index is None or index in running:
                continue
            if row.status == "skipped":
                outputs.setdefault(flow.plan.nodes[index].name, {})
            elif row.outputs is not None:
                outputs[flow.plan.nodes[index].name] = row.outputs
                if row.state_delta:
                    apply_delta(row.state_delta, state)
        return {"from_node": record.rerun_from, "outputs": outputs, "state": state}


def _settings(record: RunRecord) -> RunSettings:
    stored = record.settings if isinstance(record.settings, Mapping) else {}
    known = {k: v for k, v in stored.items() if k in RunSettings.__dataclass_fields__}
    return RunSettings(**known)


def _invalid(exc: GraphError) -> dict[str, Any]:
    return {
        "code": "invalid_request",
        "message": "; ".join(issue.message for issue in exc.issues),
        "issues": [issue.to_json() for issue in exc.issues],
    }


__all__ = ["RESUMABLE", "RunService", "RunStateError"]
