"""The run loop: execute a FlowPlan once.

It composes the parts: planning (`plan`: may a node run, what do its edges carry), the
scheduler (`scheduler`: ready queue, workers, concurrency), a node's inputs (`inputs`),
calling its executor (`attempt`), recorded and pinned outputs (`replay`). Each node's
outcome lands in `FlowRun.commit`, which reports it and settles the node's outgoing edges;
only those edges are looked at, so the cost per node does not grow with the graph.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable
from typing import Any

from nodeloom.engine import replay
from nodeloom.engine.attempt import attempt_node
from nodeloom.engine.checkpoint import Prior, apply_delta, state_delta
from nodeloom.engine.context import RunContext, RunState
from nodeloom.engine.failures import node_failure, steps_exceeded
from nodeloom.engine.inputs import parameters, spine_inputs
from nodeloom.engine.node_context import NodeContext
from nodeloom.engine.outcome import CANCELLED, Done, Failed, Outcome, Record, Replayed, Skipped
from nodeloom.engine.plan import DEAD, PENDING, edge_value, is_settled, skip_reason, starts_each
from nodeloom.engine.position import body_scope, delivery_key
from nodeloom.engine.scheduler import Scheduler
from nodeloom.engine.topology import FlowPlan, PlannedNode
from nodeloom.errors import NodeError
from nodeloom.expressions import MISSING
from nodeloom.plugins.contract import DataValue

Frozen = dict[int, dict[str, Any] | None]
# The hot path builds its Done at C speed, by position (tests/engine/test_run_cost.py
# holds Done to the fields it gives).
_tuple = tuple.__new__


class FlowRun(Scheduler):
    """One execution of a plan: the top-level graph, or one iteration of a Loop body. It is
    the `RunView` its nodes' contexts see, and its own `Scheduler` (which calls its
    `run_node`)."""

    __slots__ = (
        "context",
        "edge_values",
        "emit",
        "entry",
        "inbox",
        "loop",
        "open_bodies",
        "outputs",
        "parent",
        "parent_node",
        "pending",
        "plan",
        "prefix",
        "scope",
        "skipped",
        "state",
    )

    def __init__(
        self,
        plan: FlowPlan,
        context: RunContext,
        state: RunState,
        *,
        parent: FlowRun | None = None,
        parent_node: PlannedNode | None = None,
        entry: Any = MISSING,
        loop: dict[str, Any] | None = None,
        prefix: str = "",
        scope: str = "",
    ) -> None:
        self.plan = plan
        self.context = context
        self.state = state
        self.emit = context.events.emit
        self.parent = parent
        self.parent_node = parent_node
        self.entry = entry
        self.loop = loop
        self.prefix = prefix
        self.scope = scope  # the position of this graph run (docs/durable-runs.md)
        self.pending = plan.indegree.copy()
        self.edge_values: list[Any] = [PENDING] * len(plan.edges)
        self.outputs: list[dict[str, Any] | None] = [None] * len(plan.nodes)
        self.skipped = [False] * len(plan.nodes)
        # each-nodes: deliveries to run (edge, value, position of the execution it starts);
        # made at the first delivery
        self.inbox: dict[int, deque[tuple[int, Any, str]]] | None = None
        # node index -> its inner runs going on now; made at the first inner run
        self.open_bodies: dict[int, int] | None = None
        inner = parent is not None
        Scheduler.__init__(self, context.settings.max_concurrency, context.human, inner)

    def execute(self, frozen: Frozen | None = None) -> Awaitable[None]:
        """Run to the end (await it). `frozen` (incremental runs) maps nodes that must not
        run to the outputs they are taken to have produced (None: they did not run)."""
        if frozen:
            self._restore(frozen)
        else:
            self.ready.extend(self.plan.roots)
        return self.run_ready()  # no coroutine frame of ours around the scheduler's

    # -- one node -------------------------------------------------------------------------

    async def run_node(self, index: int) -> None:
        node = self.plan.nodes[index]
        context, state = self.context, self.state
        state.steps += 1
        node_id = self.prefix + node.id if self.prefix else node.id
        if state.steps > context.settings.max_steps:
            self.fail(steps_exceeded(context.settings.max_steps, node_id, node.name, node.type))
            return
        if node.each:
            inputs, input_value, delivery = self._take_delivery(node)
        else:
            inputs, input_value = spine_inputs(node, self.edge_values, self.entry)
            delivery = ""
        scope = NodeContext(self, context, state, node, node_id, input_value, delivery)
        outcome: Outcome
        try:
            if node.pinned is not None:
                outcome = replay.pinned(node, node.pinned, inputs, scope)
            elif context.checkpoints is not None:
                try:
                    data, error = parameters(self.plan, node, self.edge_values, scope), None
                except Exception as exc:
                    data, error = dict(node.static), exc
                outcome = await replay.recorded(node, inputs, data, error, scope)
            else:
                self.emit("started", None, node_id, node.name, node.type)
                started = time.perf_counter()
                attempts = 1
                try:
                    data = (
                        parameters(self.plan, node, self.edge_values, scope)
                        if node.dynamic
                        else dict(node.static)
                    )
                    outputs, usage, attempts = await attempt_node(
                        node, data, inputs, scope, self.emit
                    )
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    outcome = Failed(exc, attempts, started, delivery)
                else:  # Done(...) at C speed, every field given (record, pinned: none)
                    done = (outputs, usage, started, delivery, attempts, None, False)
                    outcome = _tuple(Done, done)
        except asyncio.CancelledError:
            self.commit(node, CANCELLED)
            raise
        self.commit(node, outcome)

    def _take_delivery(self, node: PlannedNode) -> tuple[dict[str, DataValue], Any, str]:
        """An each-node's next delivery: its input, the value `$json` stands for, and the
        position of the delivery."""
        queue = self.inbox.get(node.index) if self.inbox is not None else None
        if queue:
            e, value, delivery = queue.popleft()
            return {self.plan.edges[e].target_port: DataValue("data", value)}, value, delivery
        return {}, MISSING, ""

    # -- outcomes -------------------------------------------------------------------------

    def commit(self, node: PlannedNode, outcome: Outcome) -> None:
        """Where every node outcome lands: record and report it, keep the node's outputs,
        then deliver or kill its outgoing edges and queue or skip what became settled."""
        kind = type(outcome)
        if kind is Done or kind is Failed:
            fired = self._ran(node, outcome)  # type: ignore[arg-type]
            delivery = outcome.delivery  # type: ignore[union-attr]
        elif kind is Replayed:
            fired = self._replayed(node, outcome.prior)  # type: ignore[union-attr]
            delivery = outcome.delivery  # type: ignore[union-attr]
        elif kind is Skipped:
            fired = self._skip(node, outcome.reason)  # type: ignore[union-attr]
            delivery = ""
        else:  # Cancelled: nothing to report, its edges stay pending
            return
        if fired is DEAD:  # it failed the run
            return
        plan, values, pending, ready = self.plan, self.edge_values, self.pending, self.ready
        work: list[tuple[PlannedNode, Any]] | None = None  # skipped nodes to settle next
        current = node
        while True:
            for e in current.out_edges:
                edge = plan.edges[e]
                value = values[e] = edge_value(edge, fired)
                target = plan.nodes[edge.target]
                if target.each:
                    if starts_each(edge, value):
                        self._deliver_each(e, value, current.id, delivery)
                    continue
                pending[target.index] -= 1
                if not is_settled(target, pending):
                    continue
                reason = skip_reason(plan, target, values, self.skipped)
                if reason is None:
                    ready.append(target.index)
                else:  # skipped: lands here too, and settles its own edges (all dead)
                    if work is None:
                        work = []
                    work.append((target, self._skip(target, reason)))
            if not work:
                return
            current, fired = work.pop()

    def _deliver_each(self, e: int, value: Any, source_id: str, delivery: str) -> None:
        """Queue one execution of an each-node for the value on edge `e`, at the position
        named by the sender (`source_id`, at its own `delivery`)."""
        edge = self.plan.edges[e]
        key = delivery_key(source_id, edge.source_port, edge.target_port, delivery)
        inbox = self.inbox
        if inbox is None:
            inbox = self.inbox = {}
        inbox.setdefault(edge.target, deque()).append((e, value, key))
        self.ready.append(edge.target)

    def _skip(self, node: PlannedNode, reason: str) -> None:
        self.skipped[node.index] = True
        node_id = self.prefix + node.id if self.prefix else node.id
        self.emit("skipped", {"reason": reason}, node_id, node.name, node.type)

    def _replayed(self, node: PlannedNode, prior: Prior) -> dict[str, Any]:
        """Take an execution on record again: its usage, state changes and outputs."""
        state = self.state
        if prior.usage:
            state.add_usage(prior.usage)
        if prior.state_delta:
            result = apply_delta(prior.state_delta, state.shared)
            if result is not None:
                state.result = result
        outputs = self.outputs[node.index] = prior.outputs or {}
        return outputs

    def _ran(self, node: PlannedNode, outcome: Done | Failed) -> Any:
        """Record and report an execution; returns the outputs that fire its edges, or
        DEAD if it failed the run."""
        node_id = self.prefix + node.id if self.prefix else node.id
        if type(outcome) is Done:
            outputs, usage, started, _, attempts, record, pinned = outcome
            if record is not None:
                self._finished(record, "completed", outputs, None, attempts, usage)
        else:
            exc, attempts, started, _, record = outcome
            usage, pinned = None, False
            error = node_failure(exc, node_id, node.name, node.type)
            attempts = getattr(exc, "attempts", attempts)
            mode = node.on_error
            handled = {"error": error, "handled": mode != "stop", "attempts": attempts}
            self.emit("error", handled, node_id, node.name, node.type)
            if mode == "stop":
                self.fail(error)
                outputs = None
            elif mode == "continue":
                outputs = {node.main_port: {"error": error}}
            else:
                outputs = {"error": error}
            if record is not None:
                self._finished(record, "failed", outputs, error, attempts, None)
            if outputs is None:
                return DEAD
        self.outputs[node.index] = outputs
        completed = {"outputs": outputs, "duration_ms": (time.perf_counter() - started) * 1000}
        if usage:
            completed["usage"] = usage
            self.state.add_usage(usage)
        if pinned:
            completed["pinned"] = True
        self.emit("completed", completed, node_id, node.name, node.type)
        return outputs

    def _finished(
        self,
        record: Record,
        status: str,
        outputs: dict[str, Any] | None,
        error: dict[str, Any] | None,
        attempts: int,
        usage: dict[str, int] | None,
    ) -> None:
        """A recorded execution ended: its checkpoint, with what it changed in the state."""
        checkpoints, state = self.context.checkpoints, self.state
        if checkpoints is not None:
            delta = state_delta(record.before, state.shared, state.result)
            checkpoints.finished(record.ticket, status, outputs, error, attempts, usage, delta)

    def _restore(self, frozen: Frozen) -> None:
        """Incremental runs: settle the edges of nodes that do not run, then queue or skip
        every node that this settled."""
        plan = self.plan
        for index, outputs in frozen.items():
            self.outputs[index] = outputs
            node = plan.nodes[index]
            for e in node.out_edges:
                edge = plan.edges[e]
                if edge.target in frozen:
                    continue
                value = self.edge_values[e] = edge_value(edge, outputs)
                if plan.nodes[edge.target].each:
                    if starts_each(edge, value):
                        self._deliver_each(e, value, node.id, "")
                    continue
                self.pending[edge.target] -= 1
        for node in plan.nodes:
            if node.index in frozen or not is_settled(node, self.pending):
                continue
            reason = skip_reason(plan, node, self.edge_values, self.skipped)
            if reason is None:
                self.ready.append(node.index)
            else:
                self.commit(node, Skipped(reason))

    # -- inner graphs ---------------------------------------------------------------------

    async def run_body(
        self,
        node: PlannedNode,
        parameter: str,
        body: FlowPlan,
        item: Any,
        loop: dict[str, Any],
        *,
        delivery: str = "",
        iteration: int = 0,
    ) -> Any:
        """Run `node`'s inner graph once. `delivery` is the position of the node's
        execution in this graph, `iteration` the run's number (the Loop index)."""
        if body.may_wait and loop.get("concurrency", 1) > 1:
            # Concurrent iterations share their inner node ids; a person could not tell
            # (nor answer) two waiting `loop/approve` apart.
            raise NodeError(
                f"'{node.name}' runs its body concurrently, and the body may wait for a "
                "person (Approval, Human Input): set concurrency to 1 for such a body.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "concurrency"},
            )
        inner = FlowRun(
            body,
            self.context,
            self.state,
            parent=self,
            parent_node=node,
            entry=item,
            loop=loop,
            prefix=f"{self.prefix}{node.id}/",
            scope=body_scope(self.scope + delivery, parameter, iteration),
        )
        open_bodies = self.open_bodies
        if open_bodies is None:
            open_bodies = self.open_bodies = {}
        open_now = open_bodies.get(node.index, 0)
        open_bodies[node.index] = open_now + 1
        if open_now == 0:
            self.suspend()  # the Loop waits on its bodies: it is not executing
        try:
            await inner.execute()
        finally:
            open_bodies[node.index] -= 1
            if open_bodies[node.index] == 0:
                self.unsuspend()
        failure = inner.failure
        if failure is not None:
            raise NodeError(
                (f"iteration {loop['index']}: " if "index" in loop else "")
                + str(failure.get("message")),
                code=failure.get("code"),
                retryable=False,
                details={"inner": failure},
            )
        result = node.body_result.get(parameter)
        if result is None:
            return None
        outputs = inner.outputs[result]
        if outputs is None:
            return None
        return outputs.get(body.nodes[result].main_port)
