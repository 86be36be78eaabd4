"""Ethan Loop: iterate the body, check `until`, then route.

The body's result (a tool's response, an LLM's reply, ...) is the loop's `result` and
what `until` sees. A body that fails with its own `on_error` comes back as
`{"error": ...}` (the body copy runs with on_error: continue): with `resume: true` the
iteration counts as done; with `to: X` the loop stops and only its route to X fires.
Without `on_error` on the body, the failure fails the loop (and the loop's `on_error`
applies). Reaching max_iterations ends the loop when it has no `until`; with an `until`
that never held it fails with `loop_max_iterations`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.ethan import frames, runtime
from nodeloom.plugins.contract import DataValue, Event, ExecutionResult, FlowContext


class EthanLoopExecutor:
    node_type = "ethan-loop"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        spec = runtime.spec_of(data)
        frame = frames.find(context)
        limit = int(spec.get("max_iterations") or 10)
        until = spec.get("until")
        on_body_error = spec.get("body_on_error") or {}
        last: Any = None
        try:
            for index in range(limit):
                runtime.on_time(frame, spec)
                body = context.run_body("body", {"iteration": index}, {"index": index})
                last = await runtime.bounded(frame, body, runtime.describe(spec))
                yield Event("progress", {"iteration": index + 1, "of": limit})
                if _failed(last) and on_body_error.get("to"):
                    routes = list(enumerate(spec.get("routes") or []))
                    taken = [i for i, r in routes if r["kind"] == "body_error"]
                    runtime.publish(context, frame)
                    yield ExecutionResult({"result": last, **runtime.fire(spec, taken)})
                    return
                if until is not None and runtime.condition(spec, until, frame, last, "until"):
                    break
            else:
                if until is not None:
                    raise NodeError(
                        f"`until` still did not hold after max_iterations ({limit})",
                        code="loop_max_iterations",
                        retryable=False,
                    )
            yield runtime.finish(spec, frame, context, last, kinds=("edge",))
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


def _failed(value: Any) -> bool:
    """A body that failed with on_error: continue outputs exactly {"error": {...}}."""
    return isinstance(value, dict) and list(value) == ["error"] and isinstance(value["error"], dict)


executor = EthanLoopExecutor()
