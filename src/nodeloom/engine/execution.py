"""One run of a plan: phase 1 (the build), then the flow, and how it ended.

A run whose plan has nodes that may wait for a person runs in its own task: `outcome()`
returns when the run ends *or* pauses (every node still executing waits for input), and
`resume()` answers a waiting node and waits again. Other runs execute in the caller's task.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from typing import Any

from nodeloom.engine.build import Builder, BuildError
from nodeloom.engine.checkpoint import Checkpoints, Continuation
from nodeloom.engine.context import Emitter, RunContext, RunSettings, RunState
from nodeloom.engine.events import EventSink
from nodeloom.engine.failures import handed_back, run_timeout
from nodeloom.engine.human import HumanInput
from nodeloom.engine.redaction import RedactingCheckpoints, Redactor
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.engine.run import FlowRun
from nodeloom.engine.topology import FlowPlan
from nodeloom.plugins.contract import Services

Frozen = dict[int, dict[str, Any] | None]
_tuple = tuple.__new__


def public_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The run's shared state as reported: keys starting with `_` are a node's private
    bookkeeping and stay out of results."""
    return {key: value for key, value in state.items() if not key.startswith("_")}


class Execution:
    __slots__ = (
        "builder",
        "context",
        "drained",
        "frozen",
        "plan",
        "run",
        "started",
        "state",
        "task",
    )

    def __init__(
        self,
        plan: FlowPlan,
        trigger: Any,
        sink: EventSink,
        settings: RunSettings,
        services: Services,
        run_id: str | None = None,
        chat_id: str | None = None,
        frozen: Frozen | None = None,
        builder: Builder | None = None,
        answers: Mapping[str, Any] | None = None,
        checkpoints: Checkpoints | None = None,
        continuation: Continuation | None = None,
    ) -> None:
        self.plan = plan
        self.frozen = frozen
        self.builder = builder
        redactor = Redactor()  # the credential values this run resolves
        run_id = run_id or os.urandom(16).hex()
        # Events and checkpoints leave the engine with credential values masked.
        seq = continuation.last_seq if continuation is not None else 0
        events = Emitter(run_id, sink, redactor, seq)
        # A resumed run may ask whether to run an interrupted external node again.
        human = (
            HumanInput(
                answers,
                durable=bool(getattr(checkpoints, "woken", False)),
                deadlines=continuation.deadlines if continuation is not None else None,
            )
            if plan.may_wait or continuation is not None
            else None
        )
        if human is not None:
            human.on_paused = self._paused
        # RunContext(...), every field given, without its Python __new__ (a named tuple)
        self.context = context = _tuple(
            RunContext,
            (
                run_id,
                chat_id,
                trigger,
                plan.variables,
                settings,
                services,
                events,
                redactor,
                RedactingCheckpoints(checkpoints, redactor) if checkpoints is not None else None,
                continuation,
                human,
            ),
        )
        self.state = state = RunState()
        self.run = FlowRun(plan, context, state)
        self.started = 0.0
        self.task: asyncio.Task[RunResult] | None = None
        # drain() stopped the run before its end (nodes were left unstarted); not after a
        # cancel, which ends the run as cancelled whatever is left
        self.drained = False

    @property
    def run_id(self) -> str:
        return self.context.run_id

    @property
    def may_pause(self) -> bool:
        """Whether the run can stop to wait for a person (and so be resumed)."""
        return self.context.human is not None

    async def outcome(self) -> RunResult:
        """Run until the run ends, or pauses waiting for input."""
        human = self.context.human
        if human is None:
            return await self.main()
        if self.task is None:
            self.task = asyncio.create_task(self.main())
        paused = asyncio.ensure_future(human.paused.wait())
        try:
            await asyncio.wait({self.task, paused}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await self.cancel()
            raise
        finally:
            paused.cancel()
        if self.task.done():
            return self.task.result()
        return self._result(RunStatus.PAUSED, None)

    async def resume(self, node: str, answer: Any) -> RunResult:
        """Answer a waiting node (id or name) and run on. Raises AnswerError (the node
        keeps waiting) if it is not waiting or the answer does not fit."""
        assert self.context.human is not None
        self.context.human.resume(node, answer)
        return await self.outcome()

    async def cancel(self) -> None:
        """Cancel the run: running nodes are cancelled, `run_cancelled` is emitted."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    def drain(self) -> None:
        """Start no more nodes (its process is stopping): the running ones finish, their
        ends checkpointed as usual; the ready ones stay unstarted and unrecorded. Once none
        is running the run ends as usual if nothing was left, or else stops `drained`:
        no run event is emitted and it is resumable from its checkpoints, where the
        nodes that did not start run. A Loop's body, running, runs to its end."""
        self.run.drain()

    async def release(self) -> None:
        """Let go of a paused run in this process without ending it: no event is emitted
        (a run store keeps it resumable elsewhere)."""
        self.context.events.mute()
        await self.cancel()

    async def main(self) -> RunResult:
        """Phase 1 then the flow, to the end. Cancelling it cancels every running node,
        emits `run_cancelled`, and re-raises CancelledError."""
        context, settings = self.context, self.context.settings
        emit = context.events.emit
        continuation = context.continuation
        if continuation is None:
            emit("run_started", {"trigger": context.trigger})
        else:
            emit("run_resumed", {"after": continuation.reason})
        self.started = time.perf_counter()
        error: dict[str, Any] | None = None
        try:
            if settings.timeout is None:
                if self.builder is None:  # no phase 1: the flow in this frame
                    await self.run.execute(self.frozen)
                else:
                    error = await self._phases()
            else:
                scope = asyncio.timeout(settings.timeout)
                try:
                    async with scope:
                        error = await self._phases()
                except TimeoutError:
                    if not scope.expired():
                        raise
                    error = run_timeout(settings.timeout)
        except asyncio.CancelledError:
            emit("run_cancelled", {"duration_ms": self._elapsed()})
            raise
        finally:
            if self.state.http is not None:
                await self.state.aclose()
        if error is None and self.run.drained:
            self.drained = True
            return self._result(RunStatus.CANCELLED, handed_back())
        error = error or self.run.failure
        return self._result(RunStatus.COMPLETED if error is None else RunStatus.FAILED, error)

    async def _phases(self) -> dict[str, Any] | None:
        """Phase 1 (the structural build), then phase 2 (the flow). Returns a build error."""
        context = self.context
        if self.builder is not None:
            try:
                self.state.built = await self.builder.build(
                    trigger=context.trigger,
                    variables=context.variables,
                    chat_id=context.chat_id,
                    services=context.services,  # type: ignore[arg-type]
                    run_id=context.run_id,
                )
            except BuildError as exc:
                error = exc.payload
                context.events.emit(
                    "error",
                    {"error": error, "handled": False, "attempts": 1},
                    error["node_id"],
                    error["node_name"],
                    error["node_type"],
                )
                return error
        await self.run.execute(self.frozen)
        return None

    def _result(self, status: RunStatus, error: dict[str, Any] | None) -> RunResult:
        context, state, duration = self.context, self.state, self._elapsed()
        emit = context.events.emit
        usage = state.usage
        if usage:
            usage.setdefault(
                "total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
            )
        frozen = self.frozen
        outputs = {}  # a loop, not a comprehension: no function object per run
        for node, outs in zip(self.plan.nodes, self.run.outputs, strict=True):
            if outs is not None and (frozen is None or node.index not in frozen):
                outputs[node.name] = outs
        waiting: list[dict[str, Any]] = []
        if status is RunStatus.COMPLETED:
            emit("run_completed", {"duration_ms": duration, "steps": state.steps, "usage": usage})
        elif status is RunStatus.FAILED:
            emit("run_failed", {"duration_ms": duration, "error": error, "usage": usage})
        elif context.human is not None:
            waiting = context.human.describe()
        if not context.redactor.values:  # no secret resolved: nothing to mask
            return RunResult(
                context.run_id,
                status,
                outputs,
                error,
                duration,
                state.steps,
                usage,
                waiting,
                dict(state.shared),
                state.result,
            )
        redact = context.redactor.redact
        return RunResult(
            context.run_id,
            status,
            redact(outputs),
            redact(error),
            duration,
            state.steps,
            usage,
            waiting=redact(waiting),
            state=redact(dict(state.shared)),
            result=redact(state.result),
        )

    def _paused(self, waiting: list[dict[str, Any]]) -> None:
        self.context.events.emit("run_paused", {"waiting": waiting})

    def _elapsed(self) -> float:
        return (time.perf_counter() - self.started) * 1000 if self.started else 0.0
