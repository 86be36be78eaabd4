"""What every `ethan-*` executor does around its own work.

    spec_of(data)                 the node's spec (parsed once per text)
    scope(frame, result)          the names templates see
    bounded(frame, awaitable)     the work, bounded by the graph's deadline
    finish(...)                   map → routes → the run's result → ExecutionResult

Routes are chosen after the node's work, by the node itself: each route is an output
port (`route-<i>`), and a port fires with `{"from": <node id>}` when its route is taken:

- `edge` routes (the graph's `edges` from this node) fire when their `when` holds (or
  they have none);
- a router's `case` routes fire when their `when` holds, all of them (fan-out); if none
  does, its `default` route; if it has none, its `edge` routes.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

from nodeloom.errors import NodeError, NodeloomError
from nodeloom.formats.ethan import logic, templates
from nodeloom.formats.ethan.frames import Frame, GraphTimeout
from nodeloom.formats.ethan.state import apply_map
from nodeloom.plugins.contract import ExecutionResult, FlowContext

T = TypeVar("T")


@functools.lru_cache(maxsize=2048)
def _parse(text: str) -> dict[str, Any]:
    return json.loads(text)


def spec_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """The node's spec. Shared between runs: read it, never change it."""
    return _parse(data["spec"])


def describe(spec: Mapping[str, Any]) -> str:
    """How messages name an Ethan node: `llm node 'draft' (prompt 'respond')`."""
    text = f"{spec.get('type')} node '{spec.get('id')}'"
    if spec.get("prompt"):
        text += f" (prompt '{spec['prompt']}')"
    elif spec.get("tool"):
        text += f" (tool '{spec['tool']['id']}')"
    elif spec.get("subgraph"):
        text += f" (subgraph '{spec['subgraph']}')"
    return text


def scope(frame: Frame, result: Any = None) -> dict[str, Any]:
    """Template names: the state's keys, `state`, `inputs`, `result`/`output`, `env`."""
    state = frame.view()
    return {
        **state,
        "state": state,
        "inputs": frame.inputs,
        "result": result,
        "output": result,
        "env": os.environ,
    }


def condition_data(frame: Frame, spec: Mapping[str, Any], result: Any) -> dict[str, Any]:
    return {
        "state": frame.view(),
        "inputs": frame.inputs,
        "result": result,
        "output": result,
        "node": {"id": spec.get("id"), "type": spec.get("type")},
    }


async def bounded(frame: Frame, work: Awaitable[T], what: str) -> T:
    """Await `work`, failing with `graph_timeout` if the graph's deadline passes."""
    remaining = frame.remaining()
    if remaining is None:
        return await work
    if remaining <= 0:
        if asyncio.iscoroutine(work):
            work.close()
        raise GraphTimeout(f"{what}: the graph's timeout expired before it could run")
    scope_ = asyncio.timeout(remaining)
    try:
        async with scope_:
            return await work
    except TimeoutError:
        if scope_.expired():
            raise GraphTimeout(f"{what}: the graph's timeout expired while it ran") from None
        raise


def on_time(frame: Frame, spec: Mapping[str, Any]) -> None:
    """Fail with `graph_timeout` if the graph's deadline has passed."""
    remaining = frame.remaining()
    if remaining is not None and remaining <= 0:
        raise GraphTimeout(f"{describe(spec)}: the graph's timeout expired before it could run")


def failure(spec: Mapping[str, Any], exc: BaseException) -> NodeError:
    """`exc` as a NodeError whose message names the Ethan node (id, type, prompt or tool)
    and the cause; nodeloom errors keep their code and whether a retry may help."""
    if isinstance(exc, NodeError):
        details = dict(exc.details)
        error = NodeError(
            f"{describe(spec)}: {exc}", code=exc.code, retryable=exc.retryable, details=details
        )
    elif isinstance(exc, NodeloomError):
        error = NodeError(f"{describe(spec)}: {exc}", code=exc.code, retryable=exc.retryable)
    else:
        error = NodeError(f"{describe(spec)}: {type(exc).__name__}: {exc}")
    error.details.setdefault("ethan_node", {"id": spec.get("id"), "type": spec.get("type")})
    for key in ("prompt", "tool"):
        if spec.get(key):
            value = spec[key]
            error.details.setdefault(key, value["id"] if isinstance(value, dict) else value)
    return error


def apply(spec: Mapping[str, Any], frame: Frame, result: Any) -> None:
    """The node's `map`, rendered against the state before it, applied to the frame."""
    directives = spec.get("map")
    if not directives:
        return
    names = scope(frame, result)
    try:
        set_values = templates.render_value(directives.get("set") or {}, names)
        merge_values = templates.render_value(directives.get("merge") or {}, names)
        delete_paths = templates.render_value(directives.get("delete") or [], names)
    except templates.TemplateRenderError as exc:
        raise templates.TemplateRenderError(f"map: {exc}") from None
    apply_map(
        frame.state, set_values=set_values, merge_values=merge_values, delete_paths=delete_paths
    )


def holds(spec: Mapping[str, Any], route: Mapping[str, Any], frame: Frame, result: Any) -> bool:
    """Whether the route's `when` holds (a route without one always does)."""
    when = route.get("when")
    if when is None:
        return True
    return condition(spec, when, frame, result, f"the condition of the route to '{route['to']}'")


def condition(spec: Mapping[str, Any], when: Any, frame: Frame, result: Any, where: str) -> bool:
    return logic.evaluate(when, condition_data(frame, spec, result), scope(frame, result), where)


def chosen(
    spec: Mapping[str, Any],
    routes: list[tuple[int, Mapping[str, Any]]],
    frame: Frame,
    result: Any,
) -> list[int]:
    """Indices of the routes taken among `routes` ((index, route) pairs)."""
    cases = [(i, r) for i, r in routes if r["kind"] == "case"]
    edges = [(i, r) for i, r in routes if r["kind"] == "edge"]
    if cases or any(r["kind"] == "default" for _, r in routes):
        taken = [i for i, r in cases if holds(spec, r, frame, result)]
        if taken:
            return taken
        defaults = [i for i, r in routes if r["kind"] == "default"]
        if defaults:
            return defaults
    return [i for i, r in edges if holds(spec, r, frame, result)]


def fire(spec: Mapping[str, Any], indices: list[int]) -> dict[str, Any]:
    value = {"from": spec.get("id")}
    return {f"route-{i}": value for i in indices}


def finish(
    spec: Mapping[str, Any],
    frame: Frame,
    context: FlowContext,
    result: Any,
    *,
    usage: dict[str, int] | None = None,
    kinds: tuple[str, ...] = ("edge", "case", "default"),
) -> ExecutionResult:
    """Apply the map, choose the routes, publish the declared outputs (top-level graph)."""
    apply(spec, frame, result)
    routes = [(i, r) for i, r in enumerate(spec.get("routes") or []) if r["kind"] in kinds]
    outputs = {"result": result, **fire(spec, chosen(spec, routes, frame, result))}
    publish(context, frame)
    return ExecutionResult(outputs, usage=usage)


def publish(context: FlowContext, frame: Frame) -> None:
    """The run's result (RunResult.result): the top-level graph's declared outputs, as the
    state holds them now. Every top-level node publishes after its map; the last wins."""
    if not frame.top:
        return
    variables = context.variables.get("ethan") if context.variables else None
    names = (variables or {}).get("outputs") or []
    if names:
        state = frame.view()
        context.set_result({name: state.get(name) for name in names})


__all__ = [
    "apply",
    "bounded",
    "chosen",
    "condition",
    "condition_data",
    "describe",
    "failure",
    "finish",
    "fire",
    "holds",
    "on_time",
    "publish",
    "scope",
    "spec_of",
]
