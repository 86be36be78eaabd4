"""Ethan Start: validate the inputs, build the state, route to the entry nodes."""

from __future__ import annotations

import copy
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.ethan import frames, runtime, shapes
from nodeloom.formats.ethan.nodes.start.definition import missing_inputs
from nodeloom.formats.ethan.state import deep_merge
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class EthanStartExecutor:
    node_type = "ethan-start"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        declared: list[str] = spec.get("inputs") or []
        trigger = context.trigger if isinstance(context.trigger, dict) else {}
        given = trigger.get("inputs")
        if given is not None and not isinstance(given, dict):
            raise NodeError(
                f"the run's inputs must be an object of name -> value, got {type(given).__name__}",
                code="invalid_input",
                retryable=False,
            )
        missing = missing_inputs(declared, trigger)
        if missing:
            names = ", ".join(f"'{name}'" for name in missing)
            example = ", ".join(f'"{name}": ...' for name in missing)
            raise NodeError(
                f"missing required input{'s' if len(missing) > 1 else ''} {names} "
                f"(graph.inputs: {', '.join(declared)}); pass "
                f"{'them' if len(missing) > 1 else 'it'} with --inputs '{{{example}}}'",
                code="missing_input",
                retryable=False,
                details={"field": "graph.inputs", "missing": missing},
            )
        state_spec = spec.get("state") or {}
        shape: dict[str, Any] = state_spec.get("shape") or {}
        provided = {name: (given or {})[name] for name in declared}
        for name, value in provided.items():
            problem = shapes.mismatch(shape.get(name), value)
            if problem:
                raise NodeError(
                    f"input '{name}' does not fit state.shape.{name}: {problem}",
                    code="invalid_input",
                    retryable=False,
                    details={"field": f"state.shape.{name}"},
                )
        initial = copy.deepcopy(state_spec.get("init") or {})
        for key in shape:
            initial.setdefault(key, None)
        if state_spec.get("reducer", "deepmerge") == "deepmerge":
            initial = deep_merge(initial, provided)
        else:
            initial.update(copy.deepcopy(provided))
        context.state.update(initial)
        frames.set_deadline(context, spec.get("timeout"))
        frame = frames.find(context)
        routes = [(i, route) for i, route in enumerate(spec.get("routes") or [])]
        runtime.publish(context, frame)
        return ExecutionResult(
            {"result": copy.deepcopy(frame.view()), **runtime.fire(spec, [i for i, _ in routes])}
        )


executor = EthanStartExecutor()
