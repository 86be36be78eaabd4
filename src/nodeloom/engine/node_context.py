"""What a running node sees: `NodeContext`, the FlowContext of the plugin contract and
the scope of its expressions.

A node sees its graph run through `RunView`, a narrow read-only view (outputs by node,
the scope chain up to the graph runs that contain it, a `waiting()` context manager and
its inner graphs), never the run loop itself; and the run through its `RunContext` and
`RunState` (nodeloom.engine.context).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from nodeloom.engine.context import RunContext, RunState
from nodeloom.engine.human import (
    NO_ANSWER,
    TIMED_OUT,
    AnswerError,
    Waiter,
    is_timer,
    iso_time,
    normalize_answer,
    until_answer,
)
from nodeloom.engine.plan import DEAD, PENDING
from nodeloom.errors import ExpressionEvalError, NodeError
from nodeloom.expressions import MISSING, NodeOutput
from nodeloom.graph.parameters import cached_template
from nodeloom.plugins.contract import BuildContext, InputRequest, Services, StructuralResult

if TYPE_CHECKING:
    from nodeloom.engine.checkpoint import Ticket
    from nodeloom.engine.topology import FlowPlan, PlannedNode


class RunView(Protocol):
    """What a node's context sees of the graph run it belongs to. Read-only, except to
    wait for a person and to run one of its node's inner graphs."""

    @property
    def plan(self) -> FlowPlan: ...

    @property
    def outputs(self) -> Sequence[dict[str, Any] | None]:
        """Outputs by node index (None: not run, or skipped)."""
        ...

    @property
    def skipped(self) -> Sequence[bool]: ...

    @property
    def edge_values(self) -> Sequence[Any]: ...

    @property
    def loop(self) -> dict[str, Any] | None:
        """`$loop` of this graph run, if it is an inner graph's run."""
        ...

    @property
    def scope(self) -> str:
        """The position of this graph run (nodeloom.engine.position)."""
        ...

    @property
    def parent(self) -> RunView | None:
        """The graph run this one is an inner graph of (the scope chain)."""
        ...

    @property
    def parent_node(self) -> PlannedNode | None:
        """The node of `parent` whose inner graph this is."""
        ...

    def waiting(self) -> AbstractContextManager[None]:
        """Around a wait for a person: the node holds no concurrency slot meanwhile."""
        ...

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
    ) -> Any: ...


class NodeContext:
    """The FlowContext a node's executor receives; also the scope of its expressions."""

    __slots__ = (
        "bodies",
        "context",
        "delivery",
        "input_value",
        "node_id",
        "planned",
        "quiet_wait",
        "run_state",
        "ticket",
        "view",
    )

    def __init__(
        self,
        view: RunView,
        context: RunContext,
        run_state: RunState,
        node: PlannedNode,
        node_id: str,
        input_value: Any,
        delivery: str = "",
    ) -> None:
        self.view = view
        self.context = context
        self.run_state = run_state
        self.planned = node
        self.input_value = input_value
        self.node_id = node_id
        self.ticket: Ticket | None = None  # recorded runs: this execution's checkpoint
        self.quiet_wait = False  # resumed: the next `waiting` is on record already
        self.delivery = delivery  # an each-node: the delivery it runs for (its position)
        self.bodies = 0  # inner-graph runs started (numbers them when no index is given)

    # -- FlowContext ----------------------------------------------------------------------
    # Read through (not copied: a context is made per node execution, most read none).

    @property
    def run_id(self) -> str:
        return self.context.run_id

    @property
    def chat_id(self) -> str | None:
        return self.context.chat_id

    @property
    def trigger(self) -> Any:
        return self.context.trigger

    @property
    def node_name(self) -> str:
        return self.planned.name

    @property
    def node_type(self) -> str:
        return self.planned.type

    @property
    def variables(self) -> Mapping[str, Any]:
        return self.context.variables

    @property
    def state(self) -> dict[str, Any]:
        return self.run_state.shared

    @property
    def services(self) -> Services:
        services = self.context.services
        if services is None:
            raise RuntimeError("this run has no services")
        return services

    @property
    def structure(self) -> StructuralResult | None:
        built = self.run_state.built
        return built.results.get(self.node_id) if built else None

    @property
    def build_context(self) -> BuildContext | None:
        built = self.run_state.built
        return built.contexts.get(self.node_id) if built else None

    def upstream(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        view: RunView | None = self.view
        indices = sorted(self.view.plan.ancestors(self.planned.index))
        while view is not None:
            for index in indices:
                outputs = view.outputs[index]
                if outputs is not None:
                    node = view.plan.nodes[index]
                    result.setdefault(node.name, outputs.get(node.main_port))
            parent, parent_node = view.parent, view.parent_node
            if parent is None or parent_node is None:
                break
            indices = sorted(parent.plan.ancestors(parent_node.index))
            view = parent
        return result

    def sources(self, port: str) -> list[tuple[str, Any]]:
        plan, values = self.view.plan, self.view.edge_values
        found = []
        for e in self.planned.spine_ports.get(port, ()):
            value = values[e]
            if value is not DEAD and value is not PENDING:  # delivered
                found.append((plan.nodes[plan.edges[e].source].name, value))
        return found

    def http_client(self) -> Any:
        return self.run_state.http_client()

    def set_result(self, value: Any) -> None:
        self.run_state.result = value

    async def wait_for_input(self, request: InputRequest) -> Any:
        context = self.context
        human = context.human
        if human is None:
            raise NodeError(
                "this run cannot wait for input", code="executor_contract", retryable=False
            )
        emit = context.events.emit
        where = (self.node_id, self.node_name, self.node_type)
        resumed = self.quiet_wait  # on record as waiting already: the person knows
        self.quiet_wait = False
        recorded = human.deadlines.pop(self.node_id, None) if resumed else None
        if recorded is not None and request.wake_at is not None:
            request = replace(request, wake_at=recorded)  # its deadline, not a new one
        if not resumed:
            emit("waiting", request.to_json(), *where)
        answer = human.take_answer(self.node_id, self.node_name)
        if answer is NO_ANSWER:
            if request.announce is not None and not resumed:
                await request.announce()
            future = asyncio.get_running_loop().create_future()
            checkpoints, ticket = context.checkpoints, self.ticket
            with self.view.waiting():  # a waiting node does not hold a concurrency slot
                if checkpoints is not None and ticket is not None:
                    checkpoints.waiting(ticket)
                human.add(Waiter(*where, request, future))
                try:
                    answer = await until_answer(future, request.wake_at)
                finally:
                    human.remove(self.node_id)
            if checkpoints is not None and ticket is not None:
                checkpoints.resumed(ticket)
        else:
            try:
                answer = normalize_answer(request, answer)
            except AnswerError as exc:
                raise NodeError(
                    f"the answer given ahead of time does not fit: {exc}",
                    code="invalid_answer",
                    retryable=False,
                ) from None
        if answer is TIMED_OUT or is_timer(answer):
            if request.wake_at is None:
                raise NodeError(
                    f"'{self.node_name}' (id '{self.node_id}') got a timer's answer "
                    f"{answer!r} but has no deadline; answer it as a person would",
                    code="invalid_answer",
                    retryable=False,
                )
            emit("resumed", {"timed_out": True}, *where)
            raise TimeoutError(f"no answer by {iso_time(request.wake_at)}")
        emit("resumed", {"input": answer}, *where)
        return answer

    def mask(self, value: Any) -> None:
        """Mask every text in `value` in what the run reports, as a credential's value is
        (a secret parameter's rendering of one: topology._masked_whole)."""
        if isinstance(value, str):
            self.context.redactor.add(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                self.mask(item)
        elif isinstance(value, list | tuple):
            for item in value:
                self.mask(item)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.context.redactor.add(str(value))

    def evaluate(self, expression: str, extra: Mapping[str, Any] | None = None) -> Any:
        template = cached_template(expression)
        return template.render(_Overlay(self, extra) if extra else self)

    async def run_body(self, parameter: str, item: Any, loop: Mapping[str, Any]) -> Any:
        body = self.planned.bodies.get(parameter)
        if body is None:
            raise NodeError(
                f"'{self.node_name}' has no inner graph in '{parameter}'",
                code="executor_contract",
                retryable=False,
            )
        index = loop.get("index")
        iteration = index if isinstance(index, int) else self.bodies
        self.bodies += 1
        return await self.view.run_body(
            self.planned,
            parameter,
            body,
            item,
            dict(loop),
            delivery=self.delivery,
            iteration=iteration,
        )

    # -- expression scope -----------------------------------------------------------------

    def lookup(self, name: str) -> Any:
        if name == "$json" or name == "input":
            if self.input_value is MISSING:
                raise KeyError(name)
            return self.input_value
        if name == "$trigger":
            return self.trigger
        if name == "$vars":
            return self.context.variables
        if name == "$loop":
            view: RunView | None = self.view
            while view is not None and view.loop is None:
                view = view.parent
            if view is None:
                raise KeyError(name)
            return view.loop
        if name == "$run":
            return {"id": self.run_id, "chat_id": self.chat_id}
        if name == "$credentials":
            return _Credentials(self.context)
        raise KeyError(name)

    def node(self, ref: str) -> NodeOutput:
        view: RunView | None = self.view
        while view is not None:
            index = view.plan.names.get(ref)
            if index is not None:
                planned = view.plan.nodes[index]
                outputs = view.outputs[index]
                if outputs is None:
                    state = "was skipped" if view.skipped[index] else "has not run yet"
                    raise ExpressionEvalError(
                        f"node '{ref}' {state} in this run, so it has no output"
                    )
                return NodeOutput(planned.name, outputs.get(planned.main_port, MISSING), outputs)
            view = view.parent
        raise ExpressionEvalError(f"there is no node '{ref}' in this graph")


class _Credentials(Mapping[str, str]):
    """`$credentials`: each name is read from the vault when used (and its value is then
    redacted from everything the run reports). Names are not listed."""

    __slots__ = ("context",)

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def __contains__(self, name: object) -> bool:
        return True  # an unknown name fails in __getitem__, with how to add it

    def __getitem__(self, name: str) -> str:
        services = self.context.services
        source = services.credentials if services is not None else None
        if source is None:
            raise ExpressionEvalError(
                f"$credentials.{name}: this run has no credential vault (Services.credentials)"
            )
        try:
            value = source.get(name)
        except Exception as exc:  # unknown (LookupError) or a wrong key: the message says
            raise ExpressionEvalError(f"$credentials.{name}: {exc}") from None
        self.context.redactor.add(value)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class _Overlay:
    """A scope with extra root names over a node's scope (e.g. Loop's `until`)."""

    __slots__ = ("base", "extra")

    def __init__(self, base: NodeContext, extra: Mapping[str, Any]) -> None:
        self.base = base
        self.extra = extra

    def lookup(self, name: str) -> Any:
        if name in self.extra:
            return self.extra[name]
        if name == "input" and "$json" in self.extra:
            return self.extra["$json"]
        return self.base.lookup(name)

    def node(self, ref: str) -> NodeOutput:
        return self.base.node(ref)
