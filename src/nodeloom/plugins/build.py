"""The structural build (phase 1): what `build()` receives and what it returns.

A structural node (Toolset, MCP Server, an Agent wired as a tool) is compiled before the
flow starts. Its executor's `build(data, context)` gets a `BuildContext` and returns a
`StructuralResult`: tools for an agent, a compiled agent, or values known at build time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nodeloom.plugins.services import Services


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
    # Makes the build's HTTP client; the engine passes the guarded model client
    # (nodeloom.models.endpoints.model_http_client).
    http_factory: Callable[[], Any] | None = None

    def on_close(self, cleanup: Callable[[], Awaitable[None]]) -> None:
        self.cleanups.append(cleanup)

    def http_client(self) -> Any:
        """An httpx.AsyncClient that lives as long as this build (closed with it): give
        it to the models and tools the build creates. It is guarded: no private address
        but a provider's own endpoint, no environment key to a foreign host (see
        `nodeloom.models.endpoints`)."""
        client = getattr(self, "_http_client", None)
        if client is None:
            if self.http_factory is None:
                raise RuntimeError(
                    f"'{self.node_name}': this BuildContext has no http_factory; the engine "
                    "gives one (pass http_factory=model_http_client when making one by hand)"
                )
            client = self.http_factory()
            self._http_client = client
            self.on_close(client.aclose)
        return client


__all__ = [
    "AgentResult",
    "BuildContext",
    "MetadataResult",
    "StructuralResult",
    "ToolsResult",
]
