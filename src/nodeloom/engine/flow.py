"""The public face of the engine: `load()` a graph, then `run()` or `stream()` it.

flow = nodeloom.load("examples/hello.json")
result = await flow.run("Hi there")
async for event in flow.stream("Hi there"):
    print(event.event_type, event.node_name)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from nodeloom.engine.answers import answered_node, check_answers
from nodeloom.engine.build import Builder, Built
from nodeloom.engine.checkpoint import Checkpoints, Continuation
from nodeloom.engine.collector import collector_paused
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import EventSink, FanoutSink, NullSink, QueueSink
from nodeloom.engine.execution import Execution
from nodeloom.engine.incremental import Outputs, frozen_outputs, node_index
from nodeloom.engine.inputs import trigger_data
from nodeloom.engine.live import LiveRuns
from nodeloom.engine.result import RunResult
from nodeloom.engine.topology import FlowPlan, compile_plan
from nodeloom.errors import GraphError, Issue, PluginError
from nodeloom.formats import FormatOptions, read_graph
from nodeloom.graph.model import Graph
from nodeloom.graph.validation import CheckedGraph, check_graph, validate
from nodeloom.observability import traced
from nodeloom.paths import default_services
from nodeloom.plugins.contract import Event, Services
from nodeloom.plugins.registry import Registry, default_registry

__all__ = ["Flow", "Outputs", "load", "trigger_data"]


def load(
    source: str | Path | Mapping[str, Any],
    *,
    registry: Registry | None = None,
    options: FormatOptions | None = None,
    services: Services | None = None,
) -> Flow:
    """Load and validate a graph: a path (JSON or YAML), JSON text, or a dict, in the
    native format or any format nodeloom reads (detected; see docs/formats/). Raises
    GraphError listing every problem, each located."""
    registry = registry or default_registry()
    with collector_paused():
        document, _ = read_graph(source, options)
        checked = validate(document, registry)
        flow = Flow(checked, registry, services)
        flow.document = document
        return flow


class Flow:
    """A validated, compiled graph. Runs are independent; a Flow may run concurrently.
    It knows no run but the unrecorded ones `run()` made (engine/live.py): a recorded
    run is its RunService's (docs/python.md, "Who owns a live run")."""

    def __init__(
        self, checked: CheckedGraph, registry: Registry, services: Services | None = None
    ) -> None:
        checked.raise_for_issues()
        self.checked = checked
        self.registry = registry
        self.services = services or default_services()
        self.builder = Builder(checked, registry)
        try:
            self.plan: FlowPlan = compile_plan(checked, registry)
        except PluginError as exc:
            raise GraphError([Issue("plugin_unavailable", str(exc))]) from exc
        # What does not depend on the run, worked out once: the trigger's checks (nodes
        # that declare rules on it), the default settings, whether to build (phase 1).
        self._trigger_checks = tuple(
            (node, node.definition.check_trigger)
            for node in self.plan.nodes
            if node.definition.check_trigger is not None
        )
        max_steps = self.graph.limits.get("max_steps")
        self._settings = RunSettings(max_steps=max_steps) if max_steps else RunSettings()
        self._builder = self.builder if self.builder.needed else None
        self._name = checked.graph.name
        self._subsets: dict[tuple[str, ...], Flow] = {}
        # Only runs made by `run()` itself (unrecorded); see engine/live.py.
        self._live: LiveRuns | None = None
        # The native document it was loaded from (what a run store records).
        self.document: dict[str, Any] | None = None

    @property
    def graph(self) -> Graph:
        return self.checked.graph

    @property
    def name(self) -> str | None:
        return self.graph.name

    # -- running --------------------------------------------------------------------------

    async def run(
        self,
        message: Any = None,
        *,
        trigger: Mapping[str, Any] | None = None,
        sink: EventSink | None = None,
        settings: RunSettings | None = None,
        run_id: str | None = None,
        chat_id: str | None = None,
        target: str | None = None,
        from_node: str | None = None,
        outputs: Outputs | None = None,
        answers: Mapping[str, Any] | None = None,
        checkpoints: Checkpoints | None = None,
        continuation: Continuation | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """Run once. `message` becomes the trigger `{"message": ...}` (Chat Start's output).

        `target`: run only that node and its ancestors. `from_node` with `outputs` (node
        name -> {port: value}): run that node and its descendants, taking every other
        node's outputs from `outputs`. `answers` (node id or name -> answer, or a list of
        answers taken in turn) answers waiting nodes ahead of time. Invalid arguments
        raise GraphError. A run that waits for input returns with status `paused`;
        `resume()` continues it.

        `state` seeds the run's shared state. `checkpoints` and `continuation` are how a
        run recorder (`nodeloom.runs`) records the run and takes a recorded one up again.
        """
        execution = self._execution(
            message,
            trigger,
            sink,
            settings,
            run_id,
            chat_id,
            target,
            from_node,
            outputs,
            answers,
            checkpoints,
            continuation,
            state,
        )
        if not execution.may_pause:  # never resumed nor cancelled: no table, no task
            return await execution.main()
        return await self._live_runs().outcome(execution)

    def execution(
        self,
        message: Any = None,
        *,
        trigger: Mapping[str, Any] | None = None,
        sink: EventSink | None = None,
        settings: RunSettings | None = None,
        run_id: str | None = None,
        chat_id: str | None = None,
        target: str | None = None,
        from_node: str | None = None,
        outputs: Outputs | None = None,
        answers: Mapping[str, Any] | None = None,
        checkpoints: Checkpoints | None = None,
        continuation: Continuation | None = None,
        state: Mapping[str, Any] | None = None,
        services: Services | None = None,
    ) -> Execution:
        """A run, not started (arguments as `run()`), for whoever keeps track of it: `run()`
        and a RunService (which gives the run its `services`, default the flow's). Raises
        GraphError for invalid arguments."""
        return self._execution(
            message,
            trigger,
            sink,
            settings,
            run_id,
            chat_id,
            target,
            from_node,
            outputs,
            answers,
            checkpoints,
            continuation,
            state,
            services,
        )

    def _execution(
        self,
        message: Any,
        trigger: Mapping[str, Any] | None,
        sink: EventSink | None,
        settings: RunSettings | None,
        run_id: str | None,
        chat_id: str | None,
        target: str | None,
        from_node: str | None,
        outputs: Outputs | None,
        answers: Mapping[str, Any] | None,
        checkpoints: Checkpoints | None,
        continuation: Continuation | None,
        state: Mapping[str, Any] | None,
        services: Services | None = None,
    ) -> Execution:
        """`execution()`, its arguments by position (`run()` calls it once per run)."""
        if target is not None and from_node is not None:
            raise GraphError(
                [Issue("invalid_request", "give either a target or a from node, not both")]
            )
        if target is not None:
            self.check_answers(answers or {})
            subset = self._subset_to(target)
            return subset.execution(
                message,
                trigger=trigger,
                sink=sink,
                settings=settings,
                run_id=run_id,
                chat_id=chat_id,
                answers=subset.answers_for(answers or {}),
                checkpoints=checkpoints,
                continuation=continuation,
                state=state,
                services=services,
            )
        frozen = (
            frozen_outputs(self.plan, self.checked, from_node, outputs or {})
            if from_node is not None
            else None
        )
        data = trigger_data(message, trigger)
        if self._trigger_checks:
            self._check_trigger(data)
        if answers:
            self.check_answers(answers)
        execution = Execution(  # by position (once per run): as Execution's parameters
            self.plan,
            data,
            traced(sink or _NULL_SINK, self._name),
            settings or self._settings,
            services or self.services,
            run_id,
            chat_id,
            frozen,
            self._builder,
            answers,
            checkpoints,
            continuation,
        )
        if state:
            execution.state.shared.update(state)
        return execution

    def _check_trigger(self, trigger: Mapping[str, Any]) -> None:
        """Nodes that declare rules on the trigger (required inputs) are asked before the
        run starts: a bad trigger is invalid input, not a failed run."""
        issues = []
        for node, check in self._trigger_checks:
            issues += [
                Issue(code, message, node_id=node.id, field=field_name)
                for code, field_name, message in check(node.static, trigger)
            ]
        if issues:
            raise GraphError(issues)

    def check_answers(self, answers: Mapping[str, Any]) -> None:
        """Raise GraphError (`invalid_answer`, with the accepted forms) if an answer given
        ahead of time cannot fit the node it answers; see engine/answers.py."""
        issues = check_answers(self.plan, answers)
        if issues:
            raise GraphError(issues)

    def answers_for(self, answers: Mapping[str, Any]) -> dict[str, Any]:
        """The answers to nodes of this flow (a target's subset drops the others)."""
        return {ref: answer for ref, answer in answers.items() if answered_node(self.plan, ref)}

    def default_settings(self) -> RunSettings:
        """The settings a run gets when none are given: the graph's `limits` apply."""
        return self._settings

    async def resume(self, run_id: str, node: str, answer: Any) -> RunResult:
        """Answer a node (id or name) of a paused run and run on, until the run ends or
        pauses again. Raises AnswerError, and the run stays paused, if the node is not
        waiting or the answer does not fit what it asked for."""
        return await self._live_runs().resume(run_id, node, answer)

    async def cancel(self, run_id: str) -> None:
        """Cancel a paused run: its waiting nodes are cancelled, `run_cancelled` emitted."""
        await self._live_runs().cancel(run_id)

    async def release(self, run_id: str) -> None:
        """Let go of a paused run in this process without ending it (silently: no event).
        A recorded run stays resumable from its record, in any process."""
        if self._live is not None:
            await self._live.release(run_id)

    def paused(self) -> list[str]:
        """Ids of this flow's unrecorded runs that wait for input (a recorded run's are
        its RunService's: `RunService.paused()`)."""
        return self._live.paused() if self._live is not None else []

    def _live_runs(self) -> LiveRuns:
        """The table of this flow's unrecorded runs, made when first needed."""
        if self._live is None:
            self._live = LiveRuns()
        return self._live

    async def build(self, message: Any = None, *, chat_id: str | None = None) -> Built:
        """Run phase 1 only (what `nodeloom plan` shows): compile agents and tool sources
        without running the flow or calling a model."""
        return await self.builder.build(
            trigger=trigger_data(message, None),
            variables=self.plan.variables,
            chat_id=chat_id,
            services=self.services,
        )

    async def __aenter__(self) -> Flow:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release paused runs (silently: they stay paused, not cancelled) and close what
        cached builds hold open (MCP server connections, HTTP clients)."""
        if self._live is not None:
            await self._live.aclose()
        await self.builder.aclose()
        for subset in self._subsets.values():
            await subset.aclose()

    async def stream(self, message: Any = None, **options: Any) -> AsyncIterator[Event]:
        """Run once, yielding every event as it happens. The last event is the run's
        `run_completed`, `run_failed` or `run_cancelled`."""
        queue_sink = QueueSink()
        extra = options.pop("sink", None)
        sink = FanoutSink(queue_sink, extra) if extra else queue_sink
        task = asyncio.create_task(self.run(message, sink=sink, **options))
        try:
            while True:
                getter = asyncio.ensure_future(queue_sink.queue.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    event = getter.result()
                    yield event
                    if event.event_type in _FINAL and event.node_id is None:
                        break
                else:
                    getter.cancel()
                    while not queue_sink.queue.empty():
                        yield queue_sink.queue.get_nowait()
                    break
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # -- incremental runs -----------------------------------------------------------------

    def _subset_to(self, target: str) -> Flow:
        index = node_index(self.plan, target, "target")
        keep = self.plan.ancestors(index) | {index}
        key = ("target", target)
        if key not in self._subsets:
            graph = self.graph
            ids = {self.plan.nodes[i].id for i in keep}
            subset = Graph(
                tuple(n for n in graph.nodes if n.id in ids),
                tuple(e for e in graph.edges if e.source in ids and e.target in ids),
                name=graph.name,
                description=graph.description,
                version=graph.version,
                variables=graph.variables,
            )
            self._subsets[key] = Flow(
                check_graph(subset, self.registry), self.registry, self.services
            )
        return self._subsets[key]

    def check_node(self, ref: str, what: str) -> None:
        """Raise GraphError (`unknown_node`, listing the nodes) if `ref` (an id or name)
        is not a node of the flow; `what` names its role in the message."""
        node_index(self.plan, ref, what)


_NULL_SINK = NullSink()  # stateless: one for every run given no sink
_FINAL = frozenset({"run_completed", "run_failed", "run_cancelled"})
