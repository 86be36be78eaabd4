"""A FlowContext for calling one executor directly in a unit test, without a graph.

It really implements the contract: what it returns is what you give it. To run a node
inside the engine (expressions, events, retries), build a graph and use `nodeloom.load`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodeloom.plugins.contract import DataValue, Event, ExecutionResult, Services


def _services() -> Services:
    """Services that point nowhere real: give your own (e.g. with a store's `binaries`
    as `blobs`) when the node under test keeps something."""
    folder = Path(tempfile.gettempdir()) / "nodeloom-executor-context"
    return Services(data_dir=folder, session_db_file=folder / "sessions.db")


@dataclass
class ExecutorContext:
    node_id: str = "node"
    node_name: str = "node"
    node_type: str = ""
    run_id: str = "test-run"
    chat_id: str | None = None
    trigger: Any = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    upstream_outputs: dict[str, Any] = field(default_factory=dict)
    port_sources: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    services: Services = field(default_factory=_services)

    def upstream(self) -> dict[str, Any]:
        return dict(self.upstream_outputs)

    def sources(self, port: str) -> list[tuple[str, Any]]:
        return list(self.port_sources.get(port, []))

    result: Any = None

    def set_result(self, value: Any) -> None:
        self.result = value

    async def wait_for_input(self, request: Any) -> Any:
        raise RuntimeError("ExecutorContext cannot wait for input; run the node in a graph")

    def http_client(self) -> Any:
        raise RuntimeError("ExecutorContext has no HTTP client; run the node in a graph")

    def evaluate(self, expression: str, extra: Mapping[str, Any] | None = None) -> Any:
        raise RuntimeError("ExecutorContext cannot evaluate expressions; run the node in a graph")

    async def run_body(self, parameter: str, item: Any, loop: Mapping[str, Any]) -> Any:
        raise RuntimeError("ExecutorContext cannot run inner graphs; run the node in a graph")


async def call_executor(
    executor: Any,
    data: dict[str, Any],
    inputs: Mapping[str, Any] | None = None,
    context: ExecutorContext | None = None,
) -> tuple[ExecutionResult, list[Event]]:
    """Call `executor.execute` once; returns its result and the events it yielded.

    Plain input values are wrapped as spine `DataValue("data", value)`.
    """
    wrapped = {
        port: value if isinstance(value, DataValue) else DataValue("data", value)
        for port, value in (inputs or {}).items()
    }
    ctx = context or ExecutorContext(node_type=getattr(executor, "node_type", ""))
    outcome = executor.execute(data, wrapped, ctx)
    events: list[Event] = []
    if hasattr(outcome, "__anext__"):
        result = None
        async for item in outcome:
            if isinstance(item, ExecutionResult):
                result = item
            else:
                events.append(item)
        if result is None:
            raise AssertionError("the executor's generator ended without an ExecutionResult")
        return result, events
    return await outcome, events
