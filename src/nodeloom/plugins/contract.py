"""The node plugin contract: everything a node folder needs, and nothing of the engine.

A node is a folder with two files:

- `definition.py` exports `definition`, a `NodeDefinition` (pure data: ports, parameters,
  behaviour). It must import nothing heavy: discovery imports every definition at start-up.
- `executor.py` exports `executor`, an object with `node_type` and `execute()` (flow)
  and/or `build()` (structural). It is imported only when a graph uses the node.

`execute(data, inputs, context)` receives the node's resolved parameters (`data`: wire >
expression > inline value > default), the values on its input ports (`inputs`: port id ->
`DataValue`) and a `FlowContext`. It returns an `ExecutionResult`, or is an async generator
that yields `Event`s (progress, tokens) and finally one `ExecutionResult`. The ports present
in `ExecutionResult.outputs` are the ports that fired; every other port is a dead branch.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from nodeloom.graph.values import BinaryRef, DataValue

ExecutionMode = Literal["structural", "flow", "hybrid"]
SideEffects = Literal["pure", "idempotent", "external"]
ParameterType = Literal[
    "string",  # one line of text
    "text",  # long text
    "number",
    "integer",
    "boolean",
    "enum",  # one of `options`
    "json",  # any JSON value
    "code",  # source code (see `language`)
    "expression",  # kept raw: the executor evaluates it itself (e.g. Loop's `until`)
    "graph",  # an inner {"nodes", "edges"} graph (e.g. Loop's `body`); kept raw
]

CATEGORIES = (
    "core",
    "trigger",
    "ai",
    "tools",
    "flow",
    "data",
    "integration",
    "rag",
    "knowledge",
    "utility",
    "formats",
)


@dataclass(frozen=True, slots=True)
class Port:
    """An input or output handle of a node.

    `socket` is a socket type id (`data` for the spine). On inputs, `required` means the
    node cannot run unless a wire into this port delivered; `multiple` lets several edges
    enter the port (Merge). On outputs, `repeat` names a list parameter: the port is then
    repeated once per item, with `{index}` in `id` and `label` replaced by the item's index
    and `{name}` by the item itself (a string) or its `name` (an object).
    """

    id: str
    socket: str = "data"
    label: str | None = None
    required: bool = True
    multiple: bool = False
    repeat: str | None = None
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "socket": self.socket,
            "label": self.label or self.id,
            "required": self.required,
            "multiple": self.multiple,
        }
        if self.repeat:
            data["repeat"] = self.repeat
        if self.description:
            data["description"] = self.description
        return data


@dataclass(frozen=True, slots=True)
class Parameter:
    """A parameter of a node, shown as an inline control.

    A `hybrid` parameter also has a typed side socket (handle id = parameter id, socket
    type `socket`): a wire into it overrides the inline value (seed 004).
    """

    id: str
    type: ParameterType
    label: str | None = None
    default: Any = None
    required: bool = False
    description: str = ""
    options: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    hybrid: bool = False
    socket: str | None = None
    placeholder: str | None = None
    language: str | None = None

    @property
    def socket_type(self) -> str:
        if self.socket:
            return self.socket
        return _DEFAULT_SOCKETS.get(self.type, "any")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "label": self.label or self.id,
            "default": self.default,
            "required": self.required,
            "hybrid": self.hybrid,
        }
        if self.hybrid:
            data["socket"] = self.socket_type
        for key in ("description", "placeholder", "language"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if self.options:
            data["options"] = list(self.options)
        if self.minimum is not None:
            data["minimum"] = self.minimum
        if self.maximum is not None:
            data["maximum"] = self.maximum
        return data


_DEFAULT_SOCKETS = {
    "string": "string",
    "text": "text",
    "number": "float",
    "integer": "int",
    "boolean": "boolean",
    "enum": "string",
    "json": "json",
    "code": "text",
}

# Settings every node has, whatever its type. They live in `data` beside the parameters.
COMMON_PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        "name",
        "string",
        "Name",
        description="Display name, unique in the graph; "
        "expressions reach the node by it. Default: the node id.",
    ),
    Parameter(
        "on_error",
        "enum",
        "On error",
        default="stop",
        options=("stop", "continue", "error_output"),
        description='stop: the run fails; continue: the node outputs {"error": ...} '
        "on its main port; error_output: the error goes out on the `error` port.",
    ),
    Parameter(
        "retry",
        "json",
        "Retry",
        description="{max_attempts, initial_interval, backoff_factor, max_interval, retry_on}",
    ),
    Parameter(
        "activation",
        "enum",
        "Activation",
        default="join",
        options=("join", "each"),
        description="join: run once, when every incoming edge has settled. each: run once per "
        "value that arrives on any incoming edge (no join; may run many times; may sit on a "
        "cycle of each-nodes, bounded by the run's step limit).",
    ),
    Parameter(
        "timeout",
        "number",
        "Timeout (s)",
        minimum=0,
        description="Fail the node if it runs longer than this many seconds.",
    ),
    Parameter(
        "side_effects",
        "enum",
        "Side effects",
        options=("pure", "idempotent", "external"),
        description="Overrides the node type's declaration. After a crash an `external` node "
        "that had started is not run again without a decision; pure and idempotent ones are.",
    ),
    Parameter(
        "pinned",
        "json",
        "Pinned output",
        description="An object of output port -> value. Runs use it instead of executing "
        "the node (its `completed` event says `pinned: true`).",
    ),
)
SIDE_EFFECTS: tuple[str, ...] = ("pure", "idempotent", "external")
COMMON_PARAMETER_IDS = frozenset(p.id for p in COMMON_PARAMETERS)

ERROR_PORT = "error"

CheckFunction = Callable[[Mapping[str, Any]], list[tuple[str, str]]]
TriggerCheck = Callable[[Mapping[str, Any], Any], list[tuple[str, str, str]]]


@dataclass(frozen=True, eq=False)  # identity: one object per node type
class NodeDefinition:
    """What a node looks like and promises. Pure data; served as the UI's catalogue."""

    id: str
    name: str
    category: str
    description: str = ""
    icon: str = "Box"
    execution_mode: ExecutionMode = "flow"
    inputs: tuple[Port, ...] = (Port("input"),)
    outputs: tuple[Port, ...] = (Port("output"),)
    parameters: tuple[Parameter, ...] = ()
    side_effects: SideEffects = "pure"
    streaming: bool = False
    trigger: bool = False
    interactive: bool = False  # may wait for human input (FlowContext.wait_for_input)
    main_output: str | None = None
    output_shape: Mapping[str, Any] | None = None
    # Extra rules a generic parameter check cannot express: data -> [(field, message)].
    check: CheckFunction | None = field(default=None, compare=False)
    # Rules on a run's trigger, checked before the run starts (a bad trigger is invalid
    # input, not a failed run): (data, trigger) -> [(code, field, message)].
    check_trigger: TriggerCheck | None = field(default=None, compare=False)

    @property
    def main_port(self) -> str:
        """The port whose value is `$('Node').item.json` and that `continue` errors use."""
        if self.main_output:
            return self.main_output
        return self.outputs[0].id if self.outputs else "output"

    def parameter(self, parameter_id: str) -> Parameter | None:
        for parameter in self.parameters:
            if parameter.id == parameter_id:
                return parameter
        return None

    def output_ports(self, data: Mapping[str, Any]) -> list[Port]:
        """Output ports for a node with these parameters (repeated ports expanded)."""
        ports: list[Port] = []
        for port in self.outputs:
            if port.repeat is None:
                ports.append(port)
                continue
            items = data.get(port.repeat)
            if items is None:
                parameter = self.parameter(port.repeat)
                items = parameter.default if parameter else None
            for index, item in enumerate(items if isinstance(items, list) else []):
                name = item.get("name") if isinstance(item, dict) else item
                ports.append(
                    Port(
                        _fill(port.id, index, name),
                        port.socket,
                        _fill(port.label or port.id, index, name),
                        description=port.description,
                    )
                )
        return ports

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "category": self.category,
            "description": self.description,
            "icon": self.icon,
            "execution_mode": self.execution_mode,
            "inputs": [p.to_json() for p in self.inputs],
            "outputs": [p.to_json() for p in self.outputs],
            "main_output": self.main_port,
            "parameters": [p.to_json() for p in self.parameters],
            "side_effects": self.side_effects,
            "streaming": self.streaming,
            "trigger": self.trigger,
            "interactive": self.interactive,
            "output_shape": dict(self.output_shape) if self.output_shape else None,
        }


def _fill(template: str, index: int, name: object) -> str:
    return template.replace("{index}", str(index)).replace("{name}", str(name))


@dataclass(slots=True)
class Event:
    """Something that happened in a run: a node event or a run event.

    Executors yield `Event("progress", {...})` (or `agent_event`); the engine fills in
    `run_id`, `seq`, the node fields and `timestamp` before anyone sees it.
    Node event types: started, progress, completed, error, skipped, agent_event.
    Run event types: run_started, run_completed, run_failed, run_cancelled.
    """

    event_type: str
    data: dict[str, Any] | None = None
    node_id: str | None = None
    node_name: str | None = None
    node_type: str | None = None
    run_id: str = ""
    seq: int = 0
    timestamp: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "event",
            "seq": self.seq,
            "run_id": self.run_id,
            "event_type": self.event_type,
            "node_id": self.node_id,
            "node_name": self.node_name,
            "node_type": self.node_type,
            "data": self.data or {},
            "timestamp": self.timestamp,
        }


NodeEvent = Event  # the seeds' name for the same thing


@dataclass(slots=True)
class ExecutionResult:
    """Values on output ports. A missing port did not fire: its edges are dead.

    Values may be plain JSON or `DataValue`s; `events` are emitted after the result.
    `usage` reports tokens spent ({"prompt_tokens", "completion_tokens", "total_tokens"});
    the engine adds it to the `completed` event and sums it over the run.
    """

    outputs: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    usage: dict[str, int] | None = None


# -- human input ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputRequest:
    """What a waiting node asks a person for.

    `kind` is `approval` (an approve/reject decision with a note) or `input` (free text,
    or the form `fields`: [{"name", "label"?, "type"?: string|number|boolean, "required"?}]).
    `value` is what the person is asked about (shown beside the question)."""

    kind: Literal["approval", "input"]
    prompt: str = ""
    fields: tuple[Mapping[str, Any], ...] = ()
    value: Any = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "prompt": self.prompt}
        if self.fields:
            data["fields"] = [dict(f) for f in self.fields]
        if self.value is not None:
            data["value"] = self.value
        return data


# -- structural build (phase 1) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolsResult:
    """What a tool source (Toolset, MCP Server) contributes to an agent: Agno tools
    (functions, toolkits, MCPTools) and the names of the tools they offer."""

    tools: list[Any]
    names: list[str]
    source: str = ""


@dataclass(frozen=True, slots=True)
class AgentResult:
    """A compiled agent (an Agno Agent or Team). `summary` describes it for `nodeloom plan`."""

    agent: Any
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MetadataResult:
    """Values a structural node offers on its output ports at build time (e.g. a Model
    Selector's model), so side wires into other structural nodes resolve in phase 1."""

    metadata: dict[str, Any]


StructuralResult = ToolsResult | AgentResult | MetadataResult


class CredentialSource(Protocol):
    """Named secrets (nodeloom.secrets.Vault): what `{{ $credentials.name }}` reads."""

    def get(self, name: str) -> str:
        """The value of `name`; raises LookupError if there is none."""
        ...


@dataclass(frozen=True, slots=True)
class Services:
    """Where a run keeps what outlives it. Passed to builds and executors."""

    data_dir: Path
    session_db_file: Path
    credentials: CredentialSource | None = None


@dataclass
class BuildContext:
    """What `build()` receives: the node, what is wired into its structural sockets, and
    a place to register cleanups (an MCP connection to close when the build is dropped)."""

    node_id: str
    node_name: str
    node_type: str
    chat_id: str | None
    services: Services
    tools: list[ToolsResult] = field(default_factory=list)
    sub_agents: list[tuple[str, AgentResult]] = field(default_factory=list)  # (name, agent)
    data: dict[str, Any] = field(default_factory=dict)  # the build-time parameters
    deferred: frozenset[str] = frozenset()  # parameters only known when the flow runs
    cleanups: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    def on_close(self, cleanup: Callable[[], Awaitable[None]]) -> None:
        self.cleanups.append(cleanup)

    def http_client(self) -> Any:
        """An httpx.AsyncClient that lives as long as this build (closed with it): give
        it to the models and tools the build creates."""
        client = getattr(self, "_http_client", None)
        if client is None:
            import httpx

            client = httpx.AsyncClient(timeout=httpx.Timeout(600, connect=10))
            self._http_client = client
            self.on_close(client.aclose)
        return client


@runtime_checkable
class FlowContext(Protocol):
    """What the engine offers a running node. Implemented by the engine."""

    run_id: str
    node_id: str
    node_name: str
    node_type: str
    chat_id: str | None
    trigger: Any
    variables: Mapping[str, Any]
    state: dict[str, Any]
    services: Services
    structure: StructuralResult | None  # this node's phase-1 build result, if it has one
    build_context: BuildContext | None  # to build() again with data known only now

    def upstream(self) -> dict[str, Any]:
        """Main output of every upstream node that ran, by node name."""
        ...

    def sources(self, port: str) -> list[tuple[str, Any]]:
        """(source node name, value) for each edge into `port` that delivered, in the
        order of the edges in the graph file."""
        ...

    def evaluate(self, expression: str, extra: Mapping[str, Any] | None = None) -> Any:
        """Evaluate a `{{ ... }}` template in this node's scope, plus `extra` names."""
        ...

    def http_client(self) -> Any:
        """An httpx.AsyncClient shared by the run's nodes, closed when the run ends."""
        ...

    def set_result(self, value: Any) -> None:
        """Make `value` the run's result (RunResult.result; the last call wins)."""
        ...

    async def wait_for_input(self, request: InputRequest) -> Any:
        """Pause this node until a person answers; returns the answer, already checked and
        normalised for the request's kind (see nodeloom.engine.human). Other branches go
        on meanwhile; the run is `paused` once nothing else can proceed."""
        ...

    async def run_body(self, parameter: str, item: Any, loop: Mapping[str, Any]) -> Any:
        """Run the inner graph held in `parameter` (a Loop's `body`) once, with `item` as
        its entry node's spine input and `loop` as `$loop`; returns the body's result."""
        ...


class FlowExecutor(Protocol):
    node_type: str

    def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> Any:  # Awaitable[ExecutionResult] | AsyncIterator[Event | ExecutionResult]
        ...


__all__ = [
    "CATEGORIES",
    "COMMON_PARAMETERS",
    "ERROR_PORT",
    "AgentResult",
    "AsyncIterator",
    "BinaryRef",
    "BuildContext",
    "DataValue",
    "Event",
    "ExecutionMode",
    "ExecutionResult",
    "FlowContext",
    "FlowExecutor",
    "InputRequest",
    "MetadataResult",
    "NodeDefinition",
    "NodeEvent",
    "Parameter",
    "Port",
    "Services",
    "SideEffects",
    "StructuralResult",
    "ToolsResult",
]
