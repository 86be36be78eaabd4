"""What a recorded run runs: the compiled flows of a RunService (the one cache of them in
a process: the server's saved versions and the documents of recorded runs), and what a
re-run takes from the run it re-runs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from nodeloom.engine.checkpoint import apply_delta
from nodeloom.engine.context import RunSettings
from nodeloom.engine.flow import Flow, load
from nodeloom.errors import GraphError, Issue
from nodeloom.paths import default_services
from nodeloom.plugins.registry import Registry
from nodeloom.plugins.services import BinaryStore
from nodeloom.plugins.subflows import FlowRunner
from nodeloom.store import RunRecord, Store


class FlowCache:
    """Compiled flows, each compiled once per process: a saved version by (flow id,
    version), which never changes; any other document by its content's hash."""

    def __init__(self, registry: Registry, blobs: BinaryStore | None = None) -> None:
        self.registry = registry
        self.blobs = blobs  # where the flows keep binary content (a store's blob area)
        self.subflows: FlowRunner | None = None  # how their nodes start child runs
        self._flows: dict[Hashable, Flow] = {}
        self._checked: set[Hashable] = set()

    def get(
        self,
        document: dict[str, Any],
        key: Hashable | None = None,
        check: Callable[[dict[str, Any]], None] | None = None,
    ) -> Flow:
        """The compiled flow of `document`. `check` (it raises) is asked once per key
        before the flow is handed out under it (the server's Python allow-list)."""
        if key is None:
            key = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
        if check is not None and key not in self._checked:
            check(document)
            self._checked.add(key)
        flow = self._flows.get(key)
        if flow is None:
            services = dataclasses.replace(
                default_services(), blobs=self.blobs, flows=self.subflows
            )
            flow = self._flows[key] = load(document, registry=self.registry, services=services)
        return flow

    async def of(self, store: Store, record: RunRecord) -> Flow:
        """The compiled flow of the document a recorded run ran."""
        if record.flow_id is not None:
            cached = self._flows.get(("saved", record.flow_id, record.flow_version))
            if cached is not None:  # a version never changes: no read
                return cached
            version = await store.get_flow(
                record.flow_id, record.flow_version, include_deleted=True
            )
            return self.get(version.document, ("saved", version.flow_id, version.version))
        document = await store.run_document(record.id)
        if document is None:
            raise GraphError(
                [Issue("invalid_request", f"run {record.id} has no recorded graph document")]
            )
        return self.get(document)

    async def aclose(self) -> None:
        for flow in self._flows.values():
            await flow.aclose()
        self._flows.clear()
        self._checked.clear()


async def rerun_arguments(store: Store, record: RunRecord, flow: Flow) -> dict[str, Any]:
    """A re-run: the stored outputs of the original run's nodes, and the shared state
    they left. Empty for other runs."""
    if record.rerun_of is None or record.rerun_from is None:
        return {}
    rows = await store.node_executions(record.rerun_of)
    outputs: dict[str, dict[str, Any]] = {}
    state: dict[str, Any] = {}
    start = flow.plan.names.get(record.rerun_from)
    running = flow.plan.descendants(start) | {start} if start is not None else set[int]()
    for row in rows:  # in the order they started
        index = flow.plan.names.get(row.node_id)
        if "/" in row.node_id or index is None or index in running:
            continue
        if row.status == "skipped":
            outputs.setdefault(flow.plan.nodes[index].name, {})
        elif row.outputs is not None:
            outputs[flow.plan.nodes[index].name] = row.outputs
            if row.state_delta:
                apply_delta(row.state_delta, state)
    return {"from_node": record.rerun_from, "outputs": outputs, "state": state}


def stored_settings(record: RunRecord) -> RunSettings:
    """The settings a recorded run ran with."""
    stored = record.settings if isinstance(record.settings, Mapping) else {}
    known = {k: v for k, v in stored.items() if k in RunSettings.__dataclass_fields__}
    return RunSettings(**known)


def invalid(exc: GraphError) -> dict[str, Any]:
    """The error recorded for a run refused as invalid input."""
    return {
        "code": "invalid_request",
        "message": "; ".join(issue.message for issue in exc.issues),
        "issues": [issue.to_json() for issue in exc.issues],
    }
