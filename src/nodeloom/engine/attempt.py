"""Calling one node's executor: timeouts, retries with backoff, the executor contract."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from nodeloom.engine.events import EXECUTOR_EVENT_TYPES
from nodeloom.errors import NodeError, NodeTimeout
from nodeloom.plugins.contract import DataValue, Event, ExecutionResult

if TYPE_CHECKING:
    from nodeloom.engine.node_context import NodeContext
    from nodeloom.engine.topology import PlannedNode

# Emitter.emit: (event type, data, node id, node name, node type)
Emit = Callable[[str, "dict[str, Any] | None", str, str, str], None]


def attempt_node(
    node: PlannedNode,
    data: dict[str, Any],
    inputs: dict[str, DataValue],
    context: NodeContext,
    emit: Emit,
) -> Awaitable[tuple[dict[str, Any], dict[str, int] | None, int]]:
    """Run the executor, retrying per the node's policy. Returns (outputs, usage, attempts).

    The exception of the last attempt propagates with an `attempts` attribute. A node
    with neither retries nor a timeout is called directly (no coroutine frame of ours
    around its executor's).
    """
    if node.retry is None and node.timeout is None:
        return _call(node, data, inputs, context, emit)
    return _attempts(node, data, inputs, context, emit)


async def _attempts(
    node: PlannedNode,
    data: dict[str, Any],
    inputs: dict[str, DataValue],
    context: NodeContext,
    emit: Emit,
) -> tuple[dict[str, Any], dict[str, int] | None, int]:
    attempt = 1
    while True:
        try:
            if node.timeout is None:
                outputs, usage, _ = await _call(node, data, inputs, context, emit)
            else:
                outputs, usage, _ = await _call_with_timeout(node, data, inputs, context, emit)
            return outputs, usage, attempt
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            policy = node.retry
            if policy is None or not policy.should_retry(exc, attempt):
                exc.attempts = attempt  # type: ignore[attr-defined]
                raise
            delay = policy.delay(attempt)
            emit(
                "progress",
                {"retry": {"attempt": attempt, "next_in": delay, "error": _short(exc)}},
                context.node_id,
                node.name,
                node.type,
            )
            await asyncio.sleep(delay)
            attempt += 1


async def _call_with_timeout(
    node: PlannedNode,
    data: dict[str, Any],
    inputs: dict[str, DataValue],
    context: NodeContext,
    emit: Emit,
) -> tuple[dict[str, Any], dict[str, int] | None, int]:
    scope = asyncio.timeout(node.timeout)
    try:
        async with scope:
            return await _call(node, data, inputs, context, emit)
    except TimeoutError:
        if scope.expired():
            raise NodeTimeout(
                f"ran longer than its timeout of {node.timeout:g} s", retryable=True
            ) from None
        raise


async def _call(
    node: PlannedNode,
    data: dict[str, Any],
    inputs: dict[str, DataValue],
    context: NodeContext,
    emit: Emit,
) -> tuple[dict[str, Any], dict[str, int] | None, int]:
    """One attempt: (outputs, usage, 1); an error raised has `attempts` 1."""
    try:
        loaded = node.executor
        if loaded.streaming:
            result = None
            async for item in loaded.executor.execute(data, inputs, context):
                if isinstance(item, ExecutionResult):
                    result = item
                elif isinstance(item, Event):
                    _emit_from_executor(item, node, context, emit)
                else:
                    raise _contract(
                        node, f"yielded {type(item).__name__}; yield Event or ExecutionResult"
                    )
            if result is None:
                raise _contract(node, "its execute() generator ended without an ExecutionResult")
        else:
            result = await loaded.executor.execute(data, inputs, context)
            if not isinstance(result, ExecutionResult):
                raise _contract(
                    node, f"execute() returned {type(result).__name__}, not an ExecutionResult"
                )
        for event in result.events:
            _emit_from_executor(event, node, context, emit)
        outputs = result.outputs
        if not outputs.keys() <= node.output_ports:
            unknown = ", ".join(sorted(set(outputs) - node.output_ports))
            raise _contract(
                node,
                f"it fired unknown port(s) {unknown}; its ports are "
                f"{', '.join(sorted(node.output_ports))}",
            )
        for value in outputs.values():
            if isinstance(value, DataValue):
                outputs = {
                    p: (v.value if isinstance(v, DataValue) else v) for p, v in outputs.items()
                }
                break
        return outputs, result.usage, 1
    except Exception as exc:
        exc.attempts = 1  # type: ignore[attr-defined]
        raise


def _emit_from_executor(event: Event, node: PlannedNode, context: NodeContext, emit: Emit) -> None:
    if event.event_type not in EXECUTOR_EVENT_TYPES:
        raise _contract(
            node,
            f"emitted a '{event.event_type}' event; executors emit only "
            f"{', '.join(sorted(EXECUTOR_EVENT_TYPES))} (the engine emits the rest)",
        )
    emit(event.event_type, event.data, context.node_id, node.name, node.type)


def _contract(node: PlannedNode, problem: str) -> NodeError:
    return NodeError(
        f"the executor of '{node.type}' broke the plugin contract: {problem}",
        code="executor_contract",
        retryable=False,
    )


def _short(exc: BaseException) -> str:
    return f"{getattr(exc, 'code', type(exc).__name__)}: {exc}"
