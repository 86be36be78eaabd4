"""Ethan Subgraph: a frame of its own for the subgraph, then merge back.

1. Render `inputs` (parent's state and inputs); the subgraph's `inputs` are the parent's
   inputs plus these, and each declared input must be there (`missing_input`).
2. The subgraph's state: a deep copy of the parent's, with the rendered inputs set on it.
3. Run the subgraph (FlowContext.run_body) in that frame; its nodes find the frame by
   their id prefix `<this node's id>/`. Two arrivals at one subgraph node run one after
   the other.
4. Deep-merge the final state into the parent's (lists the parent already had are not
   duplicated: see nodeloom.formats.ethan.state), then map and route with
   `result` = {<each declared output>, "outputs": {...}, "state": <final state>}.
"""

from __future__ import annotations

import asyncio
import copy
import time
import weakref
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.ethan import frames, runtime, templates
from nodeloom.formats.ethan.state import deep_merge
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

_LOCKS: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = weakref.WeakValueDictionary()


class EthanSubgraphExecutor:
    node_type = "ethan-subgraph"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        parent = frames.find(context)
        try:
            runtime.on_time(parent, spec)
            if spec.get("depth_exceeded"):
                raise NodeError(
                    f"entering subgraph '{spec['subgraph']}' would go {spec['depth']} levels "
                    f"deep, past the limit of {spec['max_depth']}; raise "
                    "--max-subgraph-depth if the recursion is meant to go deeper",
                    code="max_subgraph_depth",
                    retryable=False,
                )
            rendered = templates.render_value(spec.get("inputs") or {}, runtime.scope(parent))
            sub_inputs = {**parent.inputs, **rendered}
            missing = [n for n in spec.get("declared_inputs") or [] if n not in sub_inputs]
            if missing:
                raise NodeError(
                    f"subgraph '{spec['subgraph']}' needs the input(s) "
                    + ", ".join(f"'{n}'" for n in missing)
                    + "; give them in the node's `inputs`",
                    code="missing_input",
                    retryable=False,
                )
            key = f"{context.node_id}/"
            lock = _LOCKS.get((context.run_id, key))
            if lock is None:
                lock = _LOCKS[(context.run_id, key)] = asyncio.Lock()
            async with lock:
                sub_state = await self._run(spec, parent, context, key, rendered, sub_inputs)
            parent.replace(deep_merge(parent.view(), sub_state))
            outputs = {name: sub_state.get(name) for name in spec.get("outputs") or []}
            result: dict[str, Any] = dict(outputs)
            if spec.get("as_tool"):
                result.update(
                    status=200, json=outputs, text=None, items=None, result=outputs, error=None
                )
            result.update(outputs=outputs, state=sub_state)
            return runtime.finish(spec, parent, context, result)
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc

    async def _run(
        self,
        spec: dict[str, Any],
        parent: frames.Frame,
        context: FlowContext,
        key: str,
        rendered: dict[str, Any],
        sub_inputs: dict[str, Any],
    ) -> dict[str, Any]:
        sub_state = copy.deepcopy(parent.view())
        sub_state.update(copy.deepcopy(rendered))
        seconds = spec.get("timeout")
        deadline = frames.earliest(parent.deadline, time.time() + seconds if seconds else None)
        frame = frames.enter(context, key, sub_state, sub_inputs, deadline)
        try:
            await runtime.bounded(frame, context.run_body("graph", None, {}), "the subgraph")
        except NodeError as exc:
            inner = exc.details.get("inner")
            if not isinstance(inner, dict):
                raise
            raise NodeError(  # the inner node's failure, without the engine's loop wording
                f"in subgraph '{spec['subgraph']}': {inner.get('message')}",
                code=inner.get("code"),
                retryable=False,
                details={"inner": inner},
            ) from None
        finally:
            frames.leave(context, key)
        return sub_state


executor = EthanSubgraphExecutor()
