"""Phase 1: the structural build (seed 003/004).

Before any flow node runs, every node with a `build()` (Agents, Toolsets, MCP Servers,
Model Selectors, LLM nodes) is built, children first: tool sources become tools, sub-agents
become Team members, a cluster becomes one Agno Agent or Team. A build failure fails the run
before any token is spent.

Builds are cached per Flow by a hash of the build-time parameters (and of the user's
tools), so a chat's turns reuse compiled clusters (and their MCP connections). Evicted or
closed builds run their cleanups.

A chat turn's trigger may name user tools (`tools`, see docs/nodes/chat-start.md): each
names a tool source the operator offers (`Services.user_tools`); they are built like a
Toolset or MCP Server node and given to the root agent with what is wired into it.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nodeloom.errors import ExpressionError, NodeloomError
from nodeloom.expressions import NodeOutput
from nodeloom.graph.coercion import coerce
from nodeloom.graph.model import Edge
from nodeloom.graph.parameters import RAW_TYPES
from nodeloom.graph.root_agent import accepts_user_tools, root_agent
from nodeloom.graph.validation import CheckedGraph
from nodeloom.plugins.contract import (
    AgentResult,
    BuildContext,
    MetadataResult,
    Services,
    StructuralResult,
    ToolsResult,
    UserTool,
)
from nodeloom.plugins.registry import Registry


class BuildError(NodeloomError):
    """A node could not be built; `payload` is the error object naming the node."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload["message"])
        self.payload = payload
        self.code = payload["code"]


@dataclass
class Built:
    """The results of one phase 1, by node id (`loop/inner` inside Loop bodies)."""

    results: dict[str, StructuralResult] = field(default_factory=dict)
    contexts: dict[str, BuildContext] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    async def aclose(self) -> None:
        for node_id in reversed(self.order):
            for cleanup in reversed(self.contexts[node_id].cleanups):
                await cleanup()


@dataclass(frozen=True, slots=True)
class _Step:
    full_id: str
    node_id: str
    checked: CheckedGraph
    prefix: str
    incoming: tuple[Edge, ...]  # edges into the node, in file order


class Builder:
    """Builds a flow's structure, caching results across runs (turns)."""

    def __init__(self, checked: CheckedGraph, registry: Registry, capacity: int = 8) -> None:
        self.registry = registry
        self.steps = list(_steps(checked))
        self.root_agent = root_agent(checked.graph, checked.structure)
        self.accepts_user_tools = accepts_user_tools(checked.graph)
        self.capacity = capacity
        self._cache: OrderedDict[str, Built] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def needed(self) -> bool:
        return bool(self.steps)

    async def build(
        self,
        *,
        trigger: Any,
        variables: Mapping[str, Any],
        chat_id: str | None,
        services: Services,
        run_id: str = "",
    ) -> Built:
        scope = _BuildScope(trigger, variables, run_id, chat_id)
        inputs = {step.full_id: _static_data(step, scope) for step in self.steps}
        user_tools = self._user_tools(trigger, services)
        key = _hash(
            [
                [
                    (s.full_id, s.checked.infos[s.node_id].node.type, inputs[s.full_id][0])
                    for s in self.steps
                ],
                [(t.name, t.type, t.parameters) for t in user_tools],
            ]
        )
        async with self._locks.setdefault(key, asyncio.Lock()):
            built = self._cache.get(key)
            if built is not None:
                self._cache.move_to_end(key)
                return built
            built = await self._build_all(inputs, chat_id, services, user_tools)
            self._cache[key] = built
            while len(self._cache) > self.capacity:
                _, evicted = self._cache.popitem(last=False)
                await evicted.aclose()
            return built

    async def aclose(self) -> None:
        while self._cache:
            _, built = self._cache.popitem()
            await built.aclose()

    def _user_tools(self, trigger: Any, services: Services) -> list[UserTool]:
        """The tool sources the trigger's `tools` names (Chat Start checked the flag)."""
        names = trigger.get("tools") if isinstance(trigger, Mapping) else None
        if not names or not self.accepts_user_tools:
            return []
        if self.root_agent is None or not isinstance(names, list):  # validation refuses both
            raise BuildError(
                {
                    "code": "user_tools_disabled",
                    "message": "this turn brings tools but the flow has no root agent to "
                    "give them to (an Agent reached from a Chat Start with includeUserTools)",
                }
            )
        offered = services.user_tools
        unknown = [name for name in names if name not in offered]
        if unknown:
            valid = ", ".join(sorted(offered)) or "none"
            raise BuildError(
                {
                    "code": "unknown_user_tool",
                    "message": f"no user tool named {unknown[0]!r}; offered: {valid}",
                }
            )
        return [offered[name] for name in dict.fromkeys(names)]

    async def _build_user_tools(
        self, user_tools: list[UserTool], built: Built, chat_id: str | None, services: Services
    ) -> list[ToolsResult]:
        results: list[ToolsResult] = []
        for tool in user_tools:
            full_id = f"user-tools/{tool.name}"
            context = BuildContext(
                node_id=full_id,
                node_name=tool.name,
                node_type=tool.type,
                chat_id=chat_id,
                services=services,
                data=dict(tool.parameters),
                http_factory=_model_http_client,
            )
            built.contexts[full_id] = context
            built.order.append(full_id)
            definition = self.registry.definition(tool.type)
            data = {p.id: p.default for p in definition.parameters} if definition else {}
            data.update(tool.parameters)
            try:
                result = self.registry.executor(tool.type).executor.build(data, context)
                if inspect.isawaitable(result):
                    result = await result
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                cause = (
                    str(exc) if isinstance(exc, NodeloomError) else f"{type(exc).__name__}: {exc}"
                )
                raise BuildError(
                    {
                        "code": getattr(exc, "code", "build_failed"),
                        "message": f"user tool {tool.name!r} ({tool.type}) could not be "
                        f"built: {cause}",
                        "cause": cause,
                        "node_id": full_id,
                        "node_name": tool.name,
                        "node_type": tool.type,
                    }
                ) from exc
            if isinstance(result, ToolsResult):
                results.append(result)
        return results

    async def _build_all(
        self,
        inputs: dict[str, tuple[dict[str, Any], set[str]]],
        chat_id: str | None,
        services: Services,
        user_tools: list[UserTool] | None = None,
    ) -> Built:
        built = Built()
        try:
            extra = await self._build_user_tools(user_tools or [], built, chat_id, services)
            for step in self.steps:
                tools = extra if step.full_id == self.root_agent else []
                await self._build_one(step, inputs[step.full_id], built, chat_id, services, tools)
        except BaseException:
            await built.aclose()
            raise
        return built

    async def _build_one(
        self,
        step: _Step,
        prepared: tuple[dict[str, Any], set[str]],
        built: Built,
        chat_id: str | None,
        services: Services,
        user_tools: list[ToolsResult] | None = None,
    ) -> None:
        info = step.checked.infos[step.node_id]
        node = info.node
        data, deferred = dict(prepared[0]), set(prepared[1])
        context = BuildContext(
            node_id=step.full_id,
            node_name=node.name,
            node_type=node.type,
            chat_id=chat_id,
            services=services,
            data=data,
            http_factory=_model_http_client,
        )
        graph = step.checked.graph
        for edge in step.incoming:
            source = built.results.get(step.prefix + edge.source)
            if edge.id in step.checked.structure.edges:
                if isinstance(source, ToolsResult):
                    context.tools.append(source)
                elif isinstance(source, AgentResult):
                    context.sub_agents.append((graph.by_id[edge.source].name, source))
                continue
            parameter = info.definition.parameter(edge.target_handle) if info.definition else None
            if parameter is None or not parameter.hybrid:
                continue
            if isinstance(source, MetadataResult) and edge.source_handle in source.metadata:
                source_port = step.checked.infos[edge.source].outputs[edge.source_handle]
                data[parameter.id] = coerce(
                    source.metadata[edge.source_handle], source_port.socket, parameter.socket_type
                )
                deferred.discard(parameter.id)
            else:
                deferred.add(parameter.id)
        context.tools.extend(user_tools or ())
        context.deferred = frozenset(deferred)
        built.contexts[step.full_id] = context
        built.order.append(step.full_id)
        loaded = self.registry.executor(node.type)
        if not loaded.has_build:
            return
        try:
            result = loaded.executor.build(data, context)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise BuildError(_payload(exc, step, node.name, node.type)) from exc
        if result is not None:
            built.results[step.full_id] = result


def _steps(checked: CheckedGraph, prefix: str = ""):
    """Nodes to build, children first, Loop bodies included (ids prefixed `loop/`)."""
    incoming: dict[str, list[Edge]] = {}
    for edge in checked.graph.edges:
        incoming.setdefault(edge.target, []).append(edge)
    for node_id in checked.structure.build_order:
        yield _Step(prefix + node_id, node_id, checked, prefix, tuple(incoming.get(node_id, ())))
    for node_id in checked.order:
        for body in checked.infos[node_id].bodies.values():
            yield from _steps(body, f"{prefix}{node_id}/")


def _static_data(step: _Step, scope: _BuildScope) -> tuple[dict[str, Any], set[str]]:
    """Build-time parameters: inline values and defaults, and expressions that need only
    $trigger, $vars and $run. Anything else is deferred to the flow."""
    info = step.checked.infos[step.node_id]
    definition = info.definition
    assert definition is not None
    data: dict[str, Any] = {}
    deferred: set[str] = set()
    for parameter in definition.parameters:
        value = info.node.data.get(parameter.id, parameter.default)
        template = info.templates.get(parameter.id)
        if template is not None and parameter.type not in RAW_TYPES:
            try:
                value = template.render(scope)
            except (ExpressionError, KeyError):
                value = None
                deferred.add(parameter.id)
        data[parameter.id] = value
    return data, deferred


class _BuildScope:
    """The expression scope of phase 1: only what is known before the flow runs."""

    def __init__(
        self, trigger: Any, variables: Mapping[str, Any], run_id: str, chat_id: str | None
    ) -> None:
        self.names = {
            "$trigger": trigger,
            "$vars": variables,
            "$run": {"id": run_id, "chat_id": chat_id},
        }

    def lookup(self, name: str) -> Any:
        return self.names[name]

    def node(self, ref: str) -> NodeOutput:
        raise ExpressionError(f"node '{ref}' has not run yet (building before the flow)")


def _payload(exc: Exception, step: _Step, name: str, node_type: str) -> dict[str, Any]:
    code = (
        getattr(exc, "code", "build_failed") if isinstance(exc, NodeloomError) else ("build_failed")
    )
    cause = str(exc) if isinstance(exc, NodeloomError) else f"{type(exc).__name__}: {exc}"
    return {
        "code": code,
        "message": f"node '{name}' ({node_type}, id '{step.full_id}') could not be built: {cause}",
        "cause": cause,
        "node_id": step.full_id,
        "node_name": name,
        "node_type": node_type,
    }


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _model_http_client() -> Any:
    """The guarded model client for a build (imported when first needed: httpx)."""
    from nodeloom.models.endpoints import model_http_client

    return model_http_client()
