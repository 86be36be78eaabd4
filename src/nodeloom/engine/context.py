"""What a run shares (`RunSettings`, `RunShared`) and what a running node sees
(`NodeContext`: the FlowContext of the plugin contract and the expression scope)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nodeloom.engine.events import EventSink
from nodeloom.engine.human import NO_ANSWER, AnswerError, HumanInput, Waiter, normalize_answer
from nodeloom.engine.plan import DEAD, PENDING
from nodeloom.engine.redaction import Redactor, TokenStreams
from nodeloom.errors import ExpressionEvalError, NodeError
from nodeloom.expressions import MISSING, NodeOutput
from nodeloom.graph.parameters import cached_template
from nodeloom.plugins.contract import (
    BuildContext,
    Event,
    InputRequest,
    Services,
    StructuralResult,
)

if TYPE_CHECKING:
    from nodeloom.engine.build import Built
    from nodeloom.engine.checkpoint import Checkpoints, Continuation, Ticket
    from nodeloom.engine.run import FlowRun
    from nodeloom.engine.topology import PlannedNode


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Limits of one run. `max_steps` counts node executions, Loop bodies included."""

    max_concurrency: int = 1000
    max_steps: int = 1000
    timeout: float | None = None


class RunShared:
    """State shared by a run and the inner runs of its Loop bodies."""

    __slots__ = (
        "built",
        "chat_id",
        "checkpoints",
        "continuation",
        "http",
        "human",
        "redactor",
        "result",
        "run_id",
        "seq",
        "services",
        "settings",
        "sink",
        "state",
        "steps",
        "tokens",
        "trigger",
        "usage",
        "variables",
    )

    def __init__(
        self,
        run_id: str,
        sink: EventSink,
        settings: RunSettings,
        trigger: Any,
        variables: Mapping[str, Any],
        chat_id: str | None = None,
        services: Services | None = None,
        built: Built | None = None,
    ) -> None:
        self.services = services
        self.built = built
        self.redactor = Redactor()  # the credential values this run has resolved
        self.tokens = TokenStreams(self.redactor)  # streamed tokens, masked across tokens
        self.human: HumanInput | None = None  # set for plans with nodes that may wait
        self.checkpoints: Checkpoints | None = None  # set for recorded runs
        self.continuation: Continuation | None = None  # set for a resumed recorded run
        self.result: Any = None
        self.http: Any = None
        self.usage: dict[str, int] = {}
        self.run_id = run_id
        self.sink = sink
        self.settings = settings
        self.trigger = trigger
        self.variables = variables
        self.chat_id = chat_id
        self.state: dict[str, Any] = {}
        self.seq = 0
        self.steps = 0

    def http_client(self) -> Any:
        if self.http is None:  # guarded: see nodeloom.models.endpoints
            from nodeloom.models.endpoints import model_http_client

            self.http = model_http_client()
        return self.http

    async def aclose(self) -> None:
        if self.http is not None:
            client, self.http = self.http, None
            await client.aclose()

    def add_usage(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    def emit(
        self,
        event_type: str,
        data: dict[str, Any] | None,
        node_id: str | None = None,
        node_name: str | None = None,
        node_type: str | None = None,
    ) -> None:
        for kind, released in self.tokens.release(event_type, data, node_id):
            self.seq += 1
            self.sink.emit(
                Event(
                    kind,
                    released,
                    node_id,
                    node_name,
                    node_type,
                    self.run_id,
                    self.seq,
                    time.time(),
                )
            )


class NodeContext:
    """The FlowContext a node's executor receives; also the scope of its expressions."""

    __slots__ = (
        "bodies",
        "chat_id",
        "delivery",
        "input_value",
        "node_id",
        "node_name",
        "node_type",
        "planned",
        "quiet_wait",
        "run",
        "run_id",
        "ticket",
        "trigger",
    )

    def __init__(self, run: FlowRun, node: PlannedNode, input_value: Any) -> None:
        self.run = run
        self.planned = node
        self.input_value = input_value
        shared = run.shared
        self.run_id = shared.run_id
        self.chat_id = shared.chat_id
        self.trigger = shared.trigger
        self.node_id = run.prefix + node.id if run.prefix else node.id
        self.node_name = node.name
        self.node_type = node.type
        self.ticket: Ticket | None = None  # recorded runs: this execution's checkpoint
        self.quiet_wait = False  # resumed: the next `waiting` is on record already
        self.delivery = ""  # an each-node: the delivery it runs for (its position)
        self.bodies = 0  # inner-graph runs started (numbers them when no index is given)

    # -- FlowContext ----------------------------------------------------------------------

    @property
    def variables(self) -> Mapping[str, Any]:
        return self.run.shared.variables

    @property
    def state(self) -> dict[str, Any]:
        return self.run.shared.state

    @property
    def services(self) -> Services:
        services = self.run.shared.services
        if services is None:
            raise RuntimeError("this run has no services")
        return services

    @property
    def structure(self) -> StructuralResult | None:
        built = self.run.shared.built
        return built.results.get(self.node_id) if built else None

    @property
    def build_context(self) -> BuildContext | None:
        built = self.run.shared.built
        return built.contexts.get(self.node_id) if built else None

    def upstream(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        run: FlowRun | None = self.run
        indices = sorted(self.run.plan.ancestors(self.planned.index))
        while run is not None:
            for index in indices:
                outputs = run.outputs[index]
                if outputs is not None:
                    node = run.plan.nodes[index]
                    result.setdefault(node.name, outputs.get(node.main_port))
            if run.parent is None or run.parent_node is None:
                break
            indices = sorted(run.parent.plan.ancestors(run.parent_node.index))
            run = run.parent
        return result

    def sources(self, port: str) -> list[tuple[str, Any]]:
        plan, values = self.run.plan, self.run.edge_values
        found = []
        for e in self.planned.spine_ports.get(port, ()):
            value = values[e]
            if value is not DEAD and value is not PENDING:
                found.append((plan.nodes[plan.edges[e].source].name, value))
        return found

    def http_client(self) -> Any:
        return self.run.shared.http_client()

    def set_result(self, value: Any) -> None:
        self.run.shared.result = value

    async def wait_for_input(self, request: InputRequest) -> Any:
        shared = self.run.shared
        human = shared.human
        if human is None:
            raise NodeError(
                "this run cannot wait for input", code="executor_contract", retryable=False
            )
        where = (self.node_id, self.node_name, self.node_type)
        resumed = self.quiet_wait  # on record as waiting already: the person knows
        self.quiet_wait = False
        if not resumed:
            shared.emit("waiting", request.to_json(), *where)
        answer = human.take_answer(self.node_id, self.node_name)
        if answer is NO_ANSWER:
            if request.announce is not None and not resumed:
                await request.announce()
            future = asyncio.get_running_loop().create_future()
            run = self.run
            run.blocked += 1
            run.spawn()  # a waiting node does not hold a concurrency slot
            checkpoints, ticket = shared.checkpoints, self.ticket
            if checkpoints is not None and ticket is not None:
                checkpoints.waiting(ticket)
            human.add(Waiter(*where, request, future))
            try:
                answer = await future
            finally:
                human.remove(self.node_id)
                run.blocked -= 1
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
        shared.emit("resumed", {"input": answer}, *where)
        return answer

    def mask(self, value: Any) -> None:
        """Mask every text in `value` in what the run reports, as a credential's value is
        (a secret parameter's rendering of one: topology._masked_whole)."""
        if isinstance(value, str):
            self.run.shared.redactor.add(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                self.mask(item)
        elif isinstance(value, list | tuple):
            for item in value:
                self.mask(item)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.run.shared.redactor.add(str(value))

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
        return await self.run.run_body(
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
            return self.run.shared.variables
        if name == "$loop":
            run: FlowRun | None = self.run
            while run is not None and run.loop is None:
                run = run.parent
            if run is None:
                raise KeyError(name)
            return run.loop
        if name == "$run":
            return {"id": self.run_id, "chat_id": self.chat_id}
        if name == "$credentials":
            return _Credentials(self.run.shared)
        raise KeyError(name)

    def node(self, ref: str) -> NodeOutput:
        run: FlowRun | None = self.run
        while run is not None:
            index = run.plan.names.get(ref)
            if index is not None:
                planned = run.plan.nodes[index]
                outputs = run.outputs[index]
                if outputs is None:
                    state = "was skipped" if run.skipped[index] else "has not run yet"
                    raise ExpressionEvalError(
                        f"node '{ref}' {state} in this run, so it has no output"
                    )
                return NodeOutput(planned.name, outputs.get(planned.main_port, MISSING), outputs)
            run = run.parent
        raise ExpressionEvalError(f"there is no node '{ref}' in this graph")


class _Credentials(Mapping[str, str]):
    """`$credentials`: each name is read from the vault when used (and its value is then
    redacted from everything the run reports). Names are not listed."""

    __slots__ = ("shared",)

    def __init__(self, shared: RunShared) -> None:
        self.shared = shared

    def __contains__(self, name: object) -> bool:
        return True  # an unknown name fails in __getitem__, with how to add it

    def __getitem__(self, name: str) -> str:
        services = self.shared.services
        source = services.credentials if services is not None else None
        if source is None:
            raise ExpressionEvalError(
                f"$credentials.{name}: this run has no credential vault (Services.credentials)"
            )
        try:
            value = source.get(name)
        except Exception as exc:  # unknown (LookupError) or a wrong key: the message says
            raise ExpressionEvalError(f"$credentials.{name}: {exc}") from None
        self.shared.redactor.add(value)
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
