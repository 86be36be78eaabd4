"""The legacy rules of seed 002, applied before validation, as its engine applies them:

- a node of type `input` is an `approval`;
- an `if` node's single `data.condition` (text) is `data.conditions = [{"operator":
  "contains", "value": condition}]` when it has no non-empty `conditions` list (an `if`
  with neither gets one empty condition, which never matches);
- the old `true` handle of an `if` node is `condition-0`;
- `end` nodes (removed from the editor) are left out with their connections.

Values of the wrong type are left as they are, for `validate` to report with their place.
"""

from __future__ import annotations

import dataclasses

from nodeloom.formats.workflow.document import Connection, Workflow, WorkflowNode

LEGACY_TYPES = {"input": "approval"}
LEGACY_HANDLES = {"true": "condition-0"}
REMOVED_TYPES = frozenset({"end"})


def normalize(workflow: Workflow) -> Workflow:
    nodes: list[WorkflowNode] = []
    dropped: list[str] = []
    for node in workflow.nodes:
        if node.type in REMOVED_TYPES:
            dropped.append(node.id)
            continue
        node_type = LEGACY_TYPES.get(node.type, node.type)
        data = _conditions(node.data) if node_type == "if" else node.data
        nodes.append(dataclasses.replace(node, type=node_type, data=data))
    types = {node.id: node.type for node in nodes}
    connections: list[Connection] = []
    for connection in workflow.connections:
        if connection.source in dropped or connection.target in dropped:
            continue
        handle = connection.source_handle
        if types.get(connection.source) == "if" and handle in LEGACY_HANDLES:
            connection = dataclasses.replace(connection, source_handle=LEGACY_HANDLES[handle])
        connections.append(connection)
    return dataclasses.replace(
        workflow,
        nodes=tuple(nodes),
        connections=tuple(connections),
        dropped=(*workflow.dropped, *dropped),
    )


def _conditions(data: dict[str, object]) -> dict[str, object]:
    conditions = data.get("conditions")
    if isinstance(conditions, list) and conditions:
        return {k: v for k, v in data.items() if k != "condition"}
    if conditions is not None and not isinstance(conditions, list):
        return data  # reported by validate
    legacy = data.get("condition", "")
    if not isinstance(legacy, str):
        return data  # reported by validate
    rest = {k: v for k, v in data.items() if k not in ("condition", "conditions")}
    return {**rest, "conditions": [{"operator": "contains", "value": legacy}]}
