"""The run loop: execute a FlowPlan once.

Scheduling: a node is considered as soon as every incoming edge has settled; planning
(`nodeloom.engine.plan`) says whether it runs or is skipped. Ready nodes are executed by
workers, at most `max_concurrency` at a time. A worker that finishes a node continues
with one of the nodes that became ready (no task per node on a chain) and starts new
workers for the others. After a node finishes, only its outgoing edges are looked at:
the cost per node does not grow with the size of the graph.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from nodeloom.engine.attempt import attempt_node, error_payload
from nodeloom.engine.checkpoint import Prior, apply_delta, snapshot_state, state_delta
from nodeloom.engine.context import NodeContext, RunShared
from nodeloom.engine.human import HumanInput
from nodeloom.engine.plan import DEAD, PENDING, skip_reason
from nodeloom.engine.position import body_scope, delivery_key
from nodeloom.engine.topology import FlowPlan, PlannedNode
from nodeloom.errors import CoercionError, ExpressionError, ExpressionEvalError, NodeError
from nodeloom.expressions import MISSING
from nodeloom.graph.coercion import coerce
from nodeloom.plugins.contract import DataValue, InputRequest


class FlowRun:
    """One execution of a plan: the top-level graph, or one iteration of a Loop body."""

    def __init__(
        self,
        plan: FlowPlan,
        shared: RunShared,
        *,
        parent: FlowRun | None = None,
        parent_node: PlannedNode | None = None,
        entry: Any = MISSING,
        loop: dict[str, Any] | None = None,
        prefix: str = "",
        scope: str = "",
    ) -> None:
        self.plan = plan
        self.shared = shared
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
        self.ready: deque[int] = deque()
        # each-nodes: deliveries to run (edge, value, position of the execution it starts)
        self.inbox: dict[int, deque[tuple[int, Any, str]]] = {}
        self.running = 0
        self.blocked = 0  # workers waiting for human input: they hold no concurrency slot
        self.open_bodies: dict[int, int] = {}  # node index -> its inner runs going on now
        self.tasks: set[asyncio.Task[None]] = set()
        self.failure: dict[str, Any] | None = None
        self._done: asyncio.Future[None] | None = None
        self._inline: asyncio.Task[Any] | None = None  # the task execute() runs a worker in
        self._inline_cancelled = False  # _fail cancelled it (not whoever awaits execute())

    # -- lifecycle ------------------------------------------------------------------------

    async def execute(self, frozen: dict[int, dict[str, Any] | None] | None = None) -> None:
        """Run to the end. `frozen` (incremental runs) maps nodes that must not run to
        the outputs they are taken to have produced (None: they did not run)."""
        if frozen:
            self._restore(frozen)
        else:
            self.ready.extend(self.plan.roots)
        if not self.ready:
            return
        first = self.ready.popleft()
        self.running += 1
        human = self.shared.human
        if human is not None:
            human.active += 1
        try:
            if self.ready:
                self._spawn()
            # The calling task is a worker too: a chain runs without creating any task.
            await self._inline_worker(first)
            self.running -= 1
            if human is not None:
                human.active -= 1
                self._check_paused(human)
            if self.running:
                self._done = asyncio.get_running_loop().create_future()
                await self._done
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Cancel every running node and wait until they have all finished."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _inline_worker(self, index: int) -> None:
        """A worker in the calling task. A failure elsewhere cancels it like any worker
        (its node's subprocess is killed); that cancellation ends here, the caller's own
        (a run cancelled, a timeout) goes on."""
        task = asyncio.current_task()
        self._inline = task
        try:
            await self._worker(index)
        except asyncio.CancelledError:
            if not self._inline_cancelled or task is None or task.uncancel() > 0:
                raise
        else:
            if self._inline_cancelled and task is not None:
                task.uncancel()  # a node swallowed the cancellation: balance the count
        finally:
            self._inline = None

    def spawn(self) -> None:
        if self.ready:
            self._spawn()

    def _spawn(self) -> None:
        cap = self.shared.settings.max_concurrency + self.blocked
        create = asyncio.get_running_loop().create_task
        while self.ready and self.running < cap and self.failure is None:
            index = self.ready.popleft()
            self.running += 1
            if self.shared.human is not None:
                self.shared.human.active += 1
            task = create(self._worker(index))
            self.tasks.add(task)
            task.add_done_callback(self._worker_done)

    async def _worker(self, index: int) -> None:
        try:
            while True:
                await self._run_node(self.plan.nodes[index])
                if self.failure is not None or not self.ready:
                    break
                index = self.ready.popleft()
                if self.ready:
                    self._spawn()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # an engine bug: fail the run, do not hang it
            self._fail({"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"})

    def _check_paused(self, human: HumanInput) -> None:
        """Is the run paused now? Not asked when a Loop body's last worker ends: the Loop
        is about to count as executing again (in `run_body`), not waiting."""
        if self.parent is None or self.running > 0:
            human.check()

    def _worker_done(self, task: asyncio.Task[None]) -> None:
        # A callback, not a `finally`: a worker cancelled before it started never runs its
        # body, but its callback still runs.
        self.tasks.discard(task)
        self.running -= 1
        human = self.shared.human
        if human is not None:
            human.active -= 1
            self._check_paused(human)
        if self.running == 0 and (self.failure is not None or not self.ready):
            done = self._done
            if done is not None and not done.done():
                done.set_result(None)

    def _fail(self, payload: dict[str, Any]) -> None:
        if self.failure is not None:
            return
        self.failure = payload
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()
        inline = self._inline
        if inline is not None and inline is not current and not inline.done():
            self._inline_cancelled = True
            inline.cancel()

    # -- one node -------------------------------------------------------------------------

    async def _run_node(self, node: PlannedNode) -> None:
        shared = self.shared
        shared.steps += 1
        node_id = self.prefix + node.id if self.prefix else node.id
        if shared.steps > shared.settings.max_steps:
            self._fail(
                {
                    "code": "max_steps_exceeded",
                    "message": f"the run exceeded {shared.settings.max_steps} node executions "
                    f"(at '{node.name}'); raise --max-steps if this is expected",
                    "node_id": node_id,
                    "node_name": node.name,
                    "node_type": node.type,
                }
            )
            return
        inputs, input_value, delivery = self._gather(node)
        context = NodeContext(self, node, input_value)
        context.delivery = delivery
        if shared.checkpoints is not None or node.pinned is not None:
            await self._run_recorded(node, node_id, inputs, context)
            return
        shared.emit("started", None, node_id, node.name, node.type)
        started = time.perf_counter()
        attempts = 1
        usage = None
        try:
            data = self._resolve(node, context)
            outputs, usage, attempts = await attempt_node(node, data, inputs, context, shared)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _, outputs = self._failed(node, node_id, exc, attempts)
            if outputs is None:
                return
        self._complete(node, node_id, outputs, usage, started, delivery=delivery)

    def _failed(
        self, node: PlannedNode, node_id: str, exc: Exception, attempts: int
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Report a node's failure: its error payload, and the outputs it takes per its
        on_error (None: the run fails)."""
        payload = error_payload(exc, node, node_id)
        mode = node.on_error
        self.shared.emit(
            "error",
            {
                "error": payload,
                "handled": mode != "stop",
                "attempts": getattr(exc, "attempts", attempts),
            },
            node_id,
            node.name,
            node.type,
        )
        if mode == "stop":
            self._fail(payload)
            return payload, None
        if mode == "continue":
            return payload, {node.main_port: {"error": payload}}
        return payload, {"error": payload}

    def _complete(
        self,
        node: PlannedNode,
        node_id: str,
        outputs: dict[str, Any],
        usage: dict[str, int] | None,
        started: float,
        *,
        delivery: str = "",
        **extra: Any,
    ) -> None:
        shared = self.shared
        self.outputs[node.index] = outputs
        completed = {"outputs": outputs, "duration_ms": (time.perf_counter() - started) * 1000}
        if usage:
            completed["usage"] = usage
            shared.add_usage(usage)
        completed.update(extra)
        shared.emit("completed", completed, node_id, node.name, node.type)
        self._settle(node, outputs, delivery)

    async def _run_recorded(
        self,
        node: PlannedNode,
        node_id: str,
        inputs: dict[str, DataValue],
        context: NodeContext,
    ) -> None:
        """A node of a recorded run, or a pinned node: the checkpoint hooks around it,
        and replay of an execution already on record (docs/durable-runs.md)."""
        shared = self.shared
        checkpoints = shared.checkpoints
        started = time.perf_counter()
        values = {port: value.value for port, value in inputs.items()}
        delivery = context.delivery
        activation = self.scope + delivery
        if node.pinned is not None:
            outputs = dict(node.pinned)
            if checkpoints is not None:
                pin = {"pinned": outputs}
                ticket = checkpoints.begin(node_id, activation, node, values, pin)
                checkpoints.started(ticket, node, values)
                checkpoints.finished(ticket, "completed", outputs, None, 0, None, None)
            shared.emit("started", None, node_id, node.name, node.type)
            self._complete(node, node_id, outputs, None, started, delivery=delivery, pinned=True)
            return
        assert checkpoints is not None
        resolve_error: Exception | None = None
        try:
            data = self._resolve(node, context)
        except Exception as exc:
            data, resolve_error = dict(node.static), exc
        ticket = checkpoints.begin(node_id, activation, node, values, data)
        prior = ticket.prior
        if ticket.mismatch is not None:  # found at its position, but received something else
            mismatch = {"execution": ticket.execution, "status": prior and prior.status}
            mismatch.update(ticket.mismatch, replayed=bool(prior and prior.done))
            shared.emit("replay_mismatch", mismatch, node_id, node.name, node.type)
        if prior is not None and prior.done:
            self._replay(node, prior, delivery)
            return
        in_flight = prior is not None  # it had started when the run stopped
        if not (in_flight and prior.status == "waiting"):
            shared.emit("started", None, node_id, node.name, node.type)
        else:
            context.quiet_wait = True  # its `started` and `waiting` are on record already
        checkpoints.started(ticket, node, values)
        context.ticket = ticket
        before = snapshot_state(shared.state, shared.result)
        attempts = 1
        usage = None
        try:
            if resolve_error is not None:
                raise resolve_error
            if ticket.side_effects == "external":
                if in_flight:
                    await self._confirm_replay(node, context)
                await checkpoints.barrier()
            outputs, usage, attempts = await attempt_node(node, data, inputs, context, shared)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error, failed = self._failed(node, node_id, exc, attempts)
            checkpoints.finished(
                ticket,
                "failed",
                failed,
                error,
                getattr(exc, "attempts", attempts),
                None,
                state_delta(before, shared.state, shared.result),
            )
            if failed is None:
                return
            self._complete(node, node_id, failed, None, started, delivery=delivery)
            return
        checkpoints.finished(
            ticket,
            "completed",
            outputs,
            None,
            attempts,
            usage,
            state_delta(before, shared.state, shared.result),
        )
        self._complete(node, node_id, outputs, usage, started, delivery=delivery)

    async def _confirm_replay(self, node: PlannedNode, context: NodeContext) -> None:
        """An external node had started when its run stopped: it may have acted already.
        Run it again only if the user said so (--replay-external, or approving here)."""
        continuation = self.shared.continuation
        if continuation is not None and continuation.replay_external:
            return
        answer = await context.wait_for_input(
            InputRequest(
                kind="approval",
                prompt=f"'{node.name}' has external side effects and was running when the "
                "run stopped: it may have acted already. Approve to run it again, reject to "
                "fail it.",
                value={"reason": "external_interrupted"},
            )
        )
        if answer.get("decision") != "approve":
            raise NodeError(
                "not run again after the interruption (rejected); it may or may not have "
                "acted. Re-run from this node once you have checked",
                code="external_not_replayed",
                retryable=False,
            )

    def _replay(self, node: PlannedNode, prior: Prior, delivery: str) -> None:
        """An execution the record shows finished: take its outputs, usage and state
        changes without running it or emitting its events again."""
        shared = self.shared
        outputs = prior.outputs or {}
        if prior.usage:
            shared.add_usage(prior.usage)
        if prior.state_delta:
            result = apply_delta(prior.state_delta, shared.state)
            if result is not None:
                shared.result = result
        self.outputs[node.index] = outputs
        self._settle(node, outputs, delivery)

    def _gather(self, node: PlannedNode) -> tuple[dict[str, DataValue], Any, str]:
        """Values on the node's spine inputs, the value `$json` stands for, and (an
        each-node) the position of the delivery it runs for."""
        inputs: dict[str, DataValue] = {}
        first: Any = MISSING
        if node.each:
            queue = self.inbox.get(node.index)
            if queue:
                e, value, delivery = queue.popleft()
                inputs[self.plan.edges[e].target_port] = DataValue("data", value)
                return inputs, value, delivery
            return inputs, first, ""
        values = self.edge_values
        for port, edges in node.spine_ports.items():
            if port in node.multiple_ports:
                delivered = [v for e in edges if (v := values[e]) is not DEAD]
                inputs[port] = DataValue("array", delivered)
                value = delivered
            else:
                value = MISSING
                for e in edges:
                    if values[e] is not DEAD:
                        value = values[e]
                        break
                if value is MISSING:
                    continue
                inputs[port] = DataValue("data", value)
            if first is MISSING:
                first = value
        if self.entry is not MISSING and not node.in_edges:
            if any(p.id == "input" for p in node.definition.inputs):
                inputs["input"] = DataValue("data", self.entry)
            first = self.entry
        return inputs, first, ""

    def _resolve(self, node: PlannedNode, context: NodeContext) -> dict[str, Any]:
        """Parameters: wire > expression > inline value > default."""
        data = dict(node.static)
        values = self.edge_values
        for parameter in node.dynamic:
            wired = False
            for e in parameter.wires:
                value = values[e]
                if value is not DEAD and value is not PENDING:
                    edge = self.plan.edges[e]
                    try:
                        data[parameter.id] = coerce(value, edge.source_socket, edge.target_socket)
                    except CoercionError as exc:
                        raise CoercionError(f"the wire into '{parameter.id}': {exc}") from None
                    wired = True
                    break
            if wired or parameter.render is None:
                continue
            try:
                data[parameter.id] = parameter.render(context)
            except ExpressionError as exc:
                raise ExpressionEvalError(f"parameter '{parameter.id}': {exc}") from None
        return data

    def _settle(
        self, node: PlannedNode, outputs: dict[str, Any] | None, delivery: str = ""
    ) -> None:
        """Deliver or kill the node's outgoing edges; queue or skip what became settled.
        `delivery` is the position of the execution that produced `outputs` (each-node)."""
        plan, values, pending, skipped = self.plan, self.edge_values, self.pending, self.skipped
        work = [(node, outputs)]
        while work:
            current, fired = work.pop()
            for e in current.out_edges:
                edge = plan.edges[e]
                if fired is not None and edge.source_port in fired:
                    values[e] = fired[edge.source_port]
                else:
                    values[e] = DEAD
                target = edge.target
                target_node = plan.nodes[target]
                if target_node.each:
                    value = values[e]
                    if value is not DEAD and edge.spine:
                        key = delivery_key(current.id, edge.source_port, edge.target_port, delivery)
                        self.inbox.setdefault(target, deque()).append((e, value, key))
                        self.ready.append(target)
                    continue
                pending[target] -= 1
                if pending[target]:
                    continue
                reason = skip_reason(plan, target_node, values, skipped)
                if reason is None:
                    self.ready.append(target)
                else:
                    skipped[target] = True
                    self.shared.emit(
                        "skipped",
                        {"reason": reason},
                        self.prefix + target_node.id if self.prefix else target_node.id,
                        target_node.name,
                        target_node.type,
                    )
                    work.append((target_node, None))

    def _restore(self, frozen: dict[int, dict[str, Any] | None]) -> None:
        """Incremental runs: settle the edges of nodes that do not run."""
        plan = self.plan
        for index, outputs in frozen.items():
            self.outputs[index] = outputs
            for e in plan.nodes[index].out_edges:
                edge = plan.edges[e]
                if edge.target in frozen:
                    continue
                value = (
                    outputs[edge.source_port]
                    if outputs is not None and edge.source_port in outputs
                    else DEAD
                )
                self.edge_values[e] = value
                if plan.nodes[edge.target].each:
                    if value is not DEAD and edge.spine:
                        key = delivery_key(
                            plan.nodes[index].id, edge.source_port, edge.target_port, ""
                        )
                        self.inbox.setdefault(edge.target, deque()).append((e, value, key))
                        self.ready.append(edge.target)
                    continue
                self.pending[edge.target] -= 1
        for node in plan.nodes:
            if node.index in frozen or self.pending[node.index]:
                continue
            reason = skip_reason(plan, node, self.edge_values, self.skipped)
            if reason is None:
                self.ready.append(node.index)
            else:
                self.skipped[node.index] = True
                self.shared.emit("skipped", {"reason": reason}, node.id, node.name, node.type)
                self._settle(node, None)

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
        prefix = f"{self.prefix}{node.id}/"
        scope = body_scope(self.scope + delivery, parameter, iteration)
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
            self.shared,
            parent=self,
            parent_node=node,
            entry=item,
            loop=loop,
            prefix=prefix,
            scope=scope,
        )
        human = self.shared.human
        open_now = self.open_bodies.get(node.index, 0)
        self.open_bodies[node.index] = open_now + 1
        if human is not None and open_now == 0:
            human.active -= 1  # the Loop waits on its bodies: it is not itself executing
        try:
            await inner.execute()
        finally:
            self.open_bodies[node.index] -= 1
            if human is not None and self.open_bodies[node.index] == 0:
                human.active += 1
        if inner.failure is not None:
            failure = inner.failure
            error = NodeError(
                (f"iteration {loop['index']}: " if "index" in loop else "")
                + str(failure.get("message")),
                code=failure.get("code"),
                retryable=False,
                details={"inner": failure},
            )
            raise error
        result = node.body_result.get(parameter)
        if result is None:
            return None
        outputs = inner.outputs[result]
        if outputs is None:
            return None
        return outputs.get(body.nodes[result].main_port)
