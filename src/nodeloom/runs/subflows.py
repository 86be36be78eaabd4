"""Child runs: a RunService's `FlowRunner` (nodeloom.plugins.subflows). A node asks it to
run a saved flow; the child is recorded like any run, names its parent run and node, and
runs here, in the parent's process and store. See docs/automations.md."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from nodeloom.engine.events import CallbackSink, NullSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, NodeError
from nodeloom.plugins.contract import Event
from nodeloom.plugins.subflows import ChildRun, SavedFlow
from nodeloom.runs.flows import FlowCache
from nodeloom.store import NotFoundError, RunRecord, Store

log = logging.getLogger("nodeloom.runs")
Start = Callable[..., Awaitable[RunResult]]  # RunService.start
Check = Callable[[dict[str, Any]], None]

# What a flow's trigger node takes, as a tool's input schema (a flow without one of these
# takes any object).
_FREE: dict[str, Any] = {"type": "object", "additionalProperties": True}
TRIGGER_SCHEMAS: dict[str, dict[str, Any]] = {
    "chat-start": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message."}},
        "required": ["message"],
    },
    "webhook-trigger": {
        "type": "object",
        "properties": {
            "body": {"description": "The request body (JSON or text)."},
            "query": {"type": "object", "description": "Query parameters."},
            "headers": {"type": "object", "description": "Request headers."},
        },
    },
}


class Subflows:
    """The FlowRunner of one RunService: its store, compiled flows and `start`, and the
    check a saved flow's document passes before it runs (the server's allow-list)."""

    def __init__(
        self, store: Store, flows: FlowCache, start: Start, check: Check | None = None
    ) -> None:
        self.store = store
        self.flows = flows
        self.start = start
        self.check = check

    async def find(self, flow: str, version: int | None = None) -> SavedFlow:
        return (await self.load(flow, version))[0]

    async def run_child(
        self,
        flow: str,
        *,
        trigger: Mapping[str, Any],
        parent_run_id: str,
        parent_node: str,
        version: int | None = None,
        max_depth: int = 10,
        on_event: Callable[[Event], None] | None = None,
    ) -> ChildRun:
        saved, compiled = await self.load(flow, version)
        chain = await self.chain(parent_run_id)
        if len(chain) > max_depth:
            names = " -> ".join([*chain, saved.name])
            raise NodeError(
                f"sub-flows nest {len(chain)} deep, deeper than max_depth {max_depth}: "
                f"{names}. A flow that calls itself needs a branch that stops; or raise "
                "`max_depth`",
                code="subflow_depth",
                retryable=False,
                details={"field": "max_depth", "chain": [*chain, saved.name]},
            )
        sink = CallbackSink(on_event) if on_event is not None else NullSink()
        try:
            result = await self.start(
                compiled,
                trigger=dict(trigger),
                sink=sink,
                flow_id=saved.flow_id,
                flow_version=saved.version,
                parent_run_id=parent_run_id,
                parent_node=parent_node,
            )
        except GraphError as exc:  # the trigger does not fit the child's trigger node
            raise NodeError(
                f"flow '{saved.name}' refused the input: "
                + "; ".join(issue.message for issue in exc.issues),
                code="invalid_subflow_input",
                retryable=False,
                details={"field": "input"},
            ) from None
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            # The parent was cancelled while it waited: the child is recorded cancelled
            # (RunService.start answers that), and the parent stops too.
            raise asyncio.CancelledError
        return ChildRun(
            result.run_id,
            saved,
            result.status.value,
            child_result(compiled, result),
            result.error,
        )

    async def after_run(self, run_id: str, result: RunResult, flow: Flow | None = None) -> None:
        """What follows a run's end here: a failed run starts its flow's error flow (a
        child of the failed run; never for an error flow's own run). Whatever the error
        flow does, the failed run stays failed: its problems are logged, not raised."""
        if result.status is not RunStatus.FAILED:
            return
        try:
            record = await self.store.get_run(run_id)
            flow = flow or await self.flows.of(self.store, record)
            error_flow = flow.graph.error_flow
            if not error_flow or record.parent_node == ERROR_FLOW_NODE:
                return
            child = await self.run_child(
                error_flow,
                trigger=await error_trigger(self, record, result),
                parent_run_id=record.id,
                parent_node=ERROR_FLOW_NODE,
            )
            if not child.ok:
                log.warning("the error flow of run %s ended %s", run_id, child.status)
        except Exception as exc:
            log.warning("the error flow of run %s did not run: %s", run_id, exc)

    async def chain(self, run_id: str) -> list[str]:
        """The names of the flows from the root run down to `run_id`'s."""
        names: list[str] = []
        seen: set[str] = set()
        current: str | None = run_id
        while current is not None and current not in seen:
            seen.add(current)
            try:
                record = await self.store.get_run(current)
            except NotFoundError:  # pruned: the chain starts here
                break
            names.append(await self.flow_name(record))
            current = record.parent_run_id
        return names[::-1]

    async def flow_name(self, record: RunRecord) -> str:
        if record.flow_id is not None:
            try:
                saved = await self.store.get_flow(
                    record.flow_id, record.flow_version, include_deleted=True
                )
                return saved.name
            except NotFoundError:
                return record.flow_id
        flow = await self.flows.of(self.store, record)
        return flow.name or f"run {record.id}"

    async def load(self, ref: str, version: int | None) -> tuple[SavedFlow, Flow]:
        """The saved flow `ref` (id or name) at `version`, and its compiled Flow."""
        store = self.store
        flow_id = await self._flow_id(ref)
        try:
            saved = await store.get_flow(flow_id, version)
        except NotFoundError as exc:
            raise NodeError(
                str(exc), code="unknown_flow", retryable=False, details={"field": "version"}
            ) from None
        compiled = self.flows.get(
            saved.document, ("saved", saved.flow_id, saved.version), check=self.check
        )
        return (
            SavedFlow(
                saved.flow_id,
                saved.name,
                saved.version,
                compiled.graph.description or "",
                input_schema(compiled),
            ),
            compiled,
        )

    async def _flow_id(self, ref: str) -> str:
        try:
            await self.store.list_versions(ref)  # an id: one small read
            return ref
        except NotFoundError:
            pass
        flows = await self.store.list_flows()
        named = [flow for flow in flows if flow.name == ref]
        if len(named) == 1:
            return named[0].id
        if named:
            ids = ", ".join(flow.id for flow in named)
            raise NodeError(
                f"{len(named)} saved flows are named {ref!r} ({ids}): give the flow's id",
                code="unknown_flow",
                retryable=False,
                details={"field": "flow", "received": ref},
            )
        known = ", ".join(sorted(f"{flow.name!r}" for flow in flows)) or "none"
        raise NodeError(
            f"no saved flow has the id or name {ref!r}; the saved flows are: {known}",
            code="unknown_flow",
            retryable=False,
            details={"field": "flow", "received": ref},
        )


def input_schema(flow: Flow) -> dict[str, Any]:
    """The JSON schema of what `flow` takes as its trigger (see TRIGGER_SCHEMAS)."""
    for node in flow.plan.nodes:
        schema = TRIGGER_SCHEMAS.get(node.type)
        if schema is not None:
            return schema
    return _FREE


def child_result(flow: Flow, result: RunResult) -> Any:
    """What a run returns: the value a node set as its result, else the main output of
    the end node that ran (several: an object by node name)."""
    if result.result is not None:
        return result.result
    ended = {}
    for index in flow.plan.sinks:
        node = flow.plan.nodes[index]
        ports = result.outputs.get(node.name, {})
        if node.main_port in ports:
            ended[node.name] = ports[node.main_port]
    if len(ended) == 1:
        return next(iter(ended.values()))
    return ended or None


# The `parent_node` of an error flow's run (its parent is the run that failed).
ERROR_FLOW_NODE = "$error_flow"


async def error_trigger(subflows: Subflows, record: RunRecord, result: RunResult) -> dict[str, Any]:
    """An error flow's trigger: {"run_id", "flow", "error", "node"} of the failed run."""
    error = dict(result.error or {})
    node = None
    if error.get("node_id") is not None:
        node = {
            "id": error.get("node_id"),
            "name": error.get("node_name"),
            "type": error.get("node_type"),
        }
    flow = {"id": record.flow_id, "name": await subflows.flow_name(record)}
    return {"run_id": record.id, "flow": flow, "error": error, "node": node}
