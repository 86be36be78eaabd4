"""What the graph checks need to know about node types, declared here so `graph/` stands alone.

Validation reads node definitions through the small protocols below; the plugin contract's
`NodeDefinition` and `Parameter` (nodeloom.plugins) satisfy them, and `Registry` satisfies
`Definitions`. The few concrete things both sides share live here too: `Port` (a node's
handle and its socket), the `error` port, and the ids of the settings every node has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

ERROR_PORT = "error"

# Settings every node has, whatever its type (their controls: plugins' COMMON_PARAMETERS).
SETTINGS = frozenset(
    {"name", "on_error", "retry", "activation", "timeout", "side_effects", "pinned"}
)
SIDE_EFFECTS: tuple[str, ...] = ("pure", "idempotent", "external")


@dataclass(frozen=True, slots=True)
class Port:
    """An input or output handle of a node.

    `socket` is a socket type id (`data` for the spine). On inputs, `required` means the
    node cannot run unless a wire into this port delivered; `multiple` lets several edges
    enter the port (Merge). On outputs, `repeat` names a list parameter: the port is then
    repeated once per item, with `{index}` in `id` and `label` replaced by the item's index
    and `{name}` by the item itself (a string) or its `name` (an object). `when`
    (parameter id, value) makes an output present only while that parameter has that
    value (Approval's `timeout` port: only when `on_timeout` is `port`).
    """

    id: str
    socket: str = "data"
    label: str | None = None
    required: bool = True
    multiple: bool = False
    repeat: str | None = None
    description: str = ""
    when: tuple[str, str] | None = None

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
        if self.when:
            data["when"] = {"parameter": self.when[0], "equals": self.when[1]}
        if self.description:
            data["description"] = self.description
        return data


class ParameterSpec(Protocol):
    """A parameter as the checks read it (nodeloom.plugins.Parameter)."""

    @property
    def id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def default(self) -> Any: ...
    @property
    def required(self) -> bool: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def minimum(self) -> float | None: ...
    @property
    def maximum(self) -> float | None: ...
    @property
    def hybrid(self) -> bool: ...
    @property
    def socket_type(self) -> str: ...
    @property
    def secret(self) -> bool: ...
    @property
    def allow_number(self) -> bool: ...


class DefinitionSpec(Protocol):
    """A node type as the checks read it (nodeloom.plugins.NodeDefinition)."""

    @property
    def id(self) -> str: ...
    @property
    def execution_mode(self) -> str: ...
    @property
    def inputs(self) -> Sequence[Port]: ...
    @property
    def outputs(self) -> Sequence[Port]: ...
    @property
    def parameters(self) -> Sequence[ParameterSpec]: ...
    @property
    def check(self) -> Callable[[Mapping[str, Any]], list[tuple[str, str]]] | None: ...

    def parameter(self, parameter_id: str) -> ParameterSpec | None: ...

    def output_ports(self, data: Mapping[str, Any]) -> list[Port]: ...


class Definitions(Protocol):
    """Where validation looks node types up (nodeloom.plugins.Registry)."""

    def definition(self, type_id: str) -> DefinitionSpec | None: ...

    def unknown_type_message(self, type_id: str) -> str: ...


__all__ = [
    "ERROR_PORT",
    "SETTINGS",
    "SIDE_EFFECTS",
    "DefinitionSpec",
    "Definitions",
    "ParameterSpec",
    "Port",
]
