"""The rows the timeline writes, built from what the engine gives: events (`Event`s or
their `to_json()` dicts) and checkpoint changes (dicts of node execution fields), checked
before anything is written. Changes to one checkpoint are merged in order, so that a
batch writes each row once.

Pure: no I/O. The values are still Python objects here; `Access._pack_columns` turns the
JSON columns (`EVENT_JSON`, `NODE_JSON`) into their text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from nodeloom.plugins.contract import Event
from nodeloom.store.access import check_choice
from nodeloom.store.packing import EVENT_DATA, PORTS, UNIT, Layout, dumps
from nodeloom.store.records import FINISHED_NODE_STATES, NODE_STATES, SIDE_EFFECTS

EVENT_JSON: Mapping[str, Layout] = {"data": EVENT_DATA}
NODE_JSON: Mapping[str, Layout] = {
    "inputs": PORTS,
    "outputs": PORTS,
    "error": UNIT,
    "state_delta": UNIT,
    "parameters": UNIT,
}
NODE_KEY = ("node_id", "execution")
NODE_FIELDS: tuple[str, ...] = (
    *NODE_KEY,
    "status",
    "node_name",
    "node_type",
    "inputs",
    "outputs",
    "error",
    "attempts",
    "usage",
    "started_at",
    "finished_at",
    "side_effects",
    "input_hash",
    "state_delta",
    "activation",
    "parameters",
)
_NODE_FIELD_SET = frozenset(NODE_FIELDS)


def event_row(run_id: str, item: Event | Mapping[str, Any]) -> dict[str, Any]:
    """The events row for an event of run `run_id`. Raises ValueError for an event of
    another run, or one without an integer seq and an event type."""
    if isinstance(item, Event):  # the engine's own: no need for its to_json() copy
        other, seq, event_type = item.run_id, item.seq, item.event_type
        node_id, node_name, node_type = item.node_id, item.node_name, item.node_type
        data, timestamp = item.data, item.timestamp
    else:
        other, seq = item.get("run_id"), item.get("seq")
        event_type = item.get("event_type") or item.get("type")
        node_id, node_name, node_type = (
            item.get("node_id"),
            item.get("node_name"),
            item.get("node_type"),
        )
        data, timestamp = item.get("data"), item.get("timestamp")
    if other and other != run_id:
        raise ValueError(f"an event of run {other!r} was recorded for run {run_id!r}")
    if not isinstance(seq, int) or not isinstance(event_type, str):
        shown = item.to_json() if isinstance(item, Event) else dict(item)
        raise ValueError(f"an event needs an integer seq and an event_type; got {shown!r}")
    return {
        "run_id": run_id,
        "seq": seq,
        "type": event_type,
        "node_id": node_id,
        "node_name": node_name,
        "node_type": node_type,
        "data": data or None,
        "timestamp": float(timestamp or 0.0),
    }


def merge_changes(changes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Check each checkpoint change and merge the changes to one (node_id, execution) in
    order, later keys winning: `started` with inputs then `completed` with outputs become
    one change. `execution` defaults to 1. Raises ValueError (naming the valid keys,
    statuses or side effects) before anything is written."""
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    for change in changes:
        _check_change(change)
        key = (change["node_id"], change.get("execution", 1))
        row = merged.get(key)
        if row is None:
            merged[key] = {"execution": 1, **change}
        else:
            row.update(change)
    return list(merged.values())


def checkpoint_row(run_id: str, change: dict[str, Any], at: datetime) -> frozenset[str]:
    """Complete a merged change, in place, into a node_executions row; returns the columns
    an existing row gets updated (the ones the change gives, plus `finished_at` = `at`
    for a finished status). An inserted row also gets attempts 1 and `started_at` = `at`
    unless given."""
    if change["status"] in FINISHED_NODE_STATES:
        change.setdefault("finished_at", at)
    usage = change.get("usage")
    if usage is not None:
        change["usage"] = dumps(usage)  # token counts: never a blob
    changed = frozenset(change.keys() - NODE_KEY)
    change.setdefault("attempts", 1)
    change.setdefault("started_at", at)
    change["run_id"] = run_id
    return changed


def _check_change(change: Mapping[str, Any]) -> None:
    unknown = change.keys() - _NODE_FIELD_SET
    if unknown:
        raise ValueError(
            f"a checkpoint change has unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
            f"valid: {', '.join(NODE_FIELDS)}"
        )
    node_id, execution = change.get("node_id"), change.get("execution", 1)
    if not isinstance(node_id, str) or not isinstance(execution, int) or "status" not in change:
        raise ValueError(
            "a checkpoint change needs a string node_id, an integer execution (default 1) "
            f"and a status; got node_id={node_id!r}, execution={execution!r}, "
            f"status={change.get('status', 'missing')!r}"
        )
    where = f"node {node_id!r} (execution {execution}):"
    check_choice(change["status"], NODE_STATES, f"{where} status")
    side_effects = change.get("side_effects")
    if side_effects is not None:
        check_choice(side_effects, SIDE_EFFECTS, f"{where} side_effects")
