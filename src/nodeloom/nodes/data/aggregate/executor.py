"""Aggregate: one pass over the input list, one accumulator per group and operation.

Groups keep the order in which their key was first seen; keys are compared as JSON
(so `1` and `1.0` are one group, `1` and `"1"` are two, objects group by content).
"""

from __future__ import annotations

import json
from typing import Any

from nodeloom.conditions import json_type, preview, resolve_path
from nodeloom.errors import NodeError
from nodeloom.nodes.data.aggregate.definition import (
    DEFAULT_OPERATIONS,
    check_aggregate,
    result_key,
)
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

STATE_PREFIX = "aggregate:"


class AggregateExecutor:
    node_type = "aggregate"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        items = inputs["input"].value
        if data.get("collect") is True:
            items = _collect(context, items)
        if not isinstance(items, list):
            raise NodeError(
                f"Aggregate needs a list on its `input` port; received {json_type(items)} "
                f"{preview(items)}. Wrap a single item in a list first (JSON Transform `[$]`).",
                code="invalid_input",
                retryable=False,
                details={"port": "input", "received_type": json_type(items)},
            )
        operations = data.get("operations") or DEFAULT_OPERATIONS
        problems = check_aggregate({"operations": operations, "group_by": data.get("group_by")})
        if problems:
            field, message = problems[0]
            raise NodeError(
                f"Aggregate {message}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": field},
            )
        group_by = data.get("group_by") or ""
        if not isinstance(group_by, str):
            raise NodeError(
                f"Aggregate group_by must be a dotted path; got {json_type(group_by)}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "group_by"},
            )
        ops = [(op.get("field") or "", op["op"]) for op in operations]
        groups = aggregate(items, group_by, ops)
        return ExecutionResult({"output": groups if group_by else groups[0]})


def _collect(context: FlowContext, value: Any) -> list[Any]:
    """An each-node: add what just arrived (a list adds its items) to what arrived before
    in this run, kept in the run's shared state so that a resumed run has it too."""
    key = f"{STATE_PREFIX}{context.node_id}"
    arrived = value if isinstance(value, list) else [value]
    collected = [*context.state.get(key, []), *arrived]
    context.state[key] = collected
    return collected


def aggregate(items: list[Any], group_by: str, ops: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One result object per group, in first-seen order (one object when not grouping)."""
    keys: dict[str, Any] = {}
    values: dict[str, list[list[Any]]] = {}
    if not group_by:
        keys[""] = None
        values[""] = [[] for _ in ops]
    for index, item in enumerate(items):
        key = ""
        if group_by:
            _, group = resolve_path(item, group_by)
            key = json.dumps(_canonical(group), sort_keys=True, ensure_ascii=False, default=str)
            if key not in keys:
                keys[key] = group
                values[key] = [[] for _ in ops]
        for slot, (field, op) in enumerate(ops):
            if op == "count" and not field:
                values[key][slot].append(item)
                continue
            found, value = resolve_path(item, field)
            if found and value is not None:
                values[key][slot].append((index, value))
    results = []
    for key, group in keys.items():
        result: dict[str, Any] = {group_by: group} if group_by else {}
        for slot, (field, op) in enumerate(ops):
            result[result_key(field, op)] = _reduce(op, field, values[key][slot])
        results.append(result)
    return results


def _canonical(value: Any) -> Any:
    """`value` with integral floats as ints, so that 1 and 1.0 form one group."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def _reduce(op: str, field: str, found: list[Any]) -> Any:
    if op == "count":
        return len(found)
    if op == "list":
        return [value for _, value in found]
    if op in ("sum", "avg"):
        total: float = 0
        for index, value in found:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _bad_value(op, field, index, value, "a number")
            total += value
        if op == "sum":
            return total
        return total / len(found) if found else None
    if not found:  # min or max
        return None
    kind = _orderable(found[0][1])
    for index, value in found:
        if kind is None or _orderable(value) != kind:
            raise _bad_value(op, field, index, value, "numbers, or strings, throughout")
    pick = min if op == "min" else max
    return pick(value for _, value in found)


def _orderable(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _bad_value(op: str, field: str, index: int, value: Any, wanted: str) -> NodeError:
    where = f"field {field!r} of item {index}" if field else f"item {index}"
    return NodeError(
        f"Aggregate {op} needs {wanted}; {where} is {json_type(value)} {preview(value)}. "
        "Convert it first (Type Converter) or aggregate another field.",
        code="invalid_input",
        retryable=False,
        details={"field": "operations", "item": index},
    )


executor = AggregateExecutor()
