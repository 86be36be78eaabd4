"""What a node type looks like and promises: its ports, parameters and behaviour.

Pure data, served as the UI's catalogue and read by validation (through the protocols
in nodeloom.graph.definitions). A node folder's `definition.py` builds one `NodeDefinition`
from these; it must import nothing heavy, since discovery imports every definition at
start-up. `COMMON_PARAMETERS` are the settings every node has, whatever its type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nodeloom.graph.definitions import ERROR_PORT, SIDE_EFFECTS, Port

if TYPE_CHECKING:
    from nodeloom.plugins.runtime import InputRequest

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
class Parameter:
    """A parameter of a node, shown as an inline control.

    A `hybrid` parameter also has a typed side socket (handle id = parameter id, socket
    type `socket`): a wire into it overrides the inline value (seed 004). A "string"
    parameter with `allow_number` also takes a JSON number (not a boolean), which the node
    reads itself (a Schedule Trigger's `every`: 30 means 30 seconds).
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
    secret: bool = False
    allow_number: bool = False

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
        if self.secret:
            data["secret"] = True
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
COMMON_PARAMETER_IDS = frozenset(p.id for p in COMMON_PARAMETERS)

CheckFunction = Callable[[Mapping[str, Any]], list[tuple[str, str]]]
TriggerCheck = Callable[[Mapping[str, Any], Any], list[tuple[str, str, str]]]
AsksFunction = Callable[[Mapping[str, Any]], "InputRequest | None"]


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
    # What an interactive node asks a person, from its static parameters (those set by no
    # expression or wire), so that answers given ahead of time are checked before the run
    # starts: data -> InputRequest, or None when only the run can tell.
    asks: AsksFunction | None = field(default=None, compare=False)

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
        """Output ports for a node with these parameters (repeated ports expanded, ports
        whose `when` does not hold left out)."""
        ports: list[Port] = []
        for port in self.outputs:
            if port.when is not None:
                parameter = self.parameter(port.when[0])
                default = parameter.default if parameter else None
                if data.get(port.when[0], default) != port.when[1]:
                    continue
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


__all__ = [
    "CATEGORIES",
    "COMMON_PARAMETERS",
    "COMMON_PARAMETER_IDS",
    "ERROR_PORT",
    "SIDE_EFFECTS",
    "CheckFunction",
    "ExecutionMode",
    "NodeDefinition",
    "Parameter",
    "ParameterType",
    "Port",
    "SideEffects",
    "TriggerCheck",
]
