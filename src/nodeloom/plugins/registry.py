"""The registry: node definitions by type id, executors imported on first use."""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from nodeloom.errors import PluginError
from nodeloom.graph.sockets import SOCKET_TYPES
from nodeloom.plugins.contract import COMMON_PARAMETERS, NodeDefinition
from nodeloom.plugins.discovery import (
    FoundNode,
    NodeSource,
    PluginFailure,
    builtin_sources,
    entry_point_sources,
    path_sources,
    scan,
)


@dataclass(frozen=True, slots=True)
class LoadedExecutor:
    """An executor and how the engine must call it (decided once, not per call)."""

    executor: Any
    streaming: bool  # execute() is an async generator
    has_execute: bool
    has_build: bool


class Registry:
    """Every node type known to this process. Build one with `Registry.discover()`."""

    def __init__(self, found: list[FoundNode], failures: list[PluginFailure]) -> None:
        self.failures = list(failures)
        self._found: dict[str, FoundNode] = {}
        for item in found:
            type_id = item.definition.id
            if type_id in self._found:
                kept = self._found[type_id]
                self.failures.append(
                    PluginFailure(
                        item.origin,
                        str(item.folder),
                        f"node type '{type_id}' is already defined by {kept.folder} "
                        f"({kept.origin}); this one is ignored",
                    )
                )
                continue
            self._found[type_id] = item
        self._executors: dict[str, LoadedExecutor] = {}

    @classmethod
    def discover(
        cls,
        *,
        paths: list[str] | None = None,
        builtins: bool = True,
        use_entry_points: bool = True,
        use_environment: bool = True,
    ) -> Registry:
        failures: list[PluginFailure] = []
        sources: list[NodeSource] = builtin_sources() if builtins else []
        if use_entry_points:
            sources += entry_point_sources(failures)
        if use_environment:
            sources += path_sources()
        for path in paths or []:
            sources += path_sources(path)
        return cls(list(scan(sources, failures)), failures)

    # -- definitions ----------------------------------------------------------------------

    @property
    def types(self) -> list[str]:
        return sorted(self._found)

    def definition(self, type_id: str) -> NodeDefinition | None:
        found = self._found.get(type_id)
        return found.definition if found else None

    def found(self, type_id: str) -> FoundNode | None:
        return self._found.get(type_id)

    def suggest(self, type_id: str) -> list[str]:
        return difflib.get_close_matches(type_id, self._found, n=3, cutoff=0.6)

    def unknown_type_message(self, type_id: str) -> str:
        hint = self.suggest(type_id)
        if hint:
            return f"unknown node type '{type_id}'; did you mean {_quoted(hint)}?"
        return (
            f"unknown node type '{type_id}'; run `nodeloom nodes` to list the "
            f"{len(self._found)} known types"
        )

    # -- executors ------------------------------------------------------------------------

    def executor(self, type_id: str) -> LoadedExecutor:
        """The executor of a node type, imported on first use."""
        loaded = self._executors.get(type_id)
        if loaded is not None:
            return loaded
        found = self._found.get(type_id)
        if found is None:
            raise PluginError(self.unknown_type_message(type_id))
        try:
            module = importlib.import_module(f"{found.module}.executor")
        except Exception as exc:
            raise PluginError(
                f"the executor of node type '{type_id}' ({found.folder / 'executor.py'}) "
                f"failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        executor = getattr(module, "executor", None)
        if executor is None:
            raise PluginError(f"{found.folder / 'executor.py'} must export `executor`")
        if getattr(executor, "node_type", None) != type_id:
            raise PluginError(
                f"{found.folder / 'executor.py'}: executor.node_type is "
                f"{getattr(executor, 'node_type', None)!r}, but the definition's id is "
                f"'{type_id}'"
            )
        execute = getattr(executor, "execute", None)
        loaded = LoadedExecutor(
            executor=executor,
            streaming=inspect.isasyncgenfunction(execute),
            has_execute=execute is not None,
            has_build=getattr(executor, "build", None) is not None,
        )
        if not (loaded.has_execute or loaded.has_build):
            raise PluginError(
                f"{found.folder / 'executor.py'}: the executor implements "
                "neither execute() nor build()"
            )
        self._executors[type_id] = loaded
        return loaded

    # -- catalogue ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The catalogue the UI renders nodes from (`nodeloom nodes --json`)."""
        return {
            "nodes": [self._found[t].definition.to_json() for t in self.types],
            "common_parameters": [p.to_json() for p in COMMON_PARAMETERS],
            "socket_types": [
                {
                    "id": s.id,
                    "color": s.color,
                    "shape": s.shape,
                    "description": s.description,
                    "structural": s.structural,
                }
                for s in SOCKET_TYPES.values()
            ],
            "coercions": _coercions_json(),
            "failures": [f.to_json() for f in self.failures],
        }


def _coercions_json() -> list[dict[str, str]]:
    from nodeloom.graph.sockets import COERCIONS

    return [{"from": s, "to": t} for s, t in sorted(COERCIONS)]


def _quoted(names: list[str]) -> str:
    return " or ".join(f"'{n}'" for n in names)


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The process-wide registry: built-ins (formats' nodes included), entry points and
    NODELOOM_NODES_PATH."""
    return Registry.discover()
