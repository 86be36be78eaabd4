"""A start/agent/if/approval workflow file (seed 002), read into plain values.

    {"nodes": [{"id", "type", "x", "y", "data": {...}}],
     "connections": [{"source", "target", "sourceHandle"?, "targetHandle"?}]}

`edges` is accepted in place of `connections`. Reading checks only the shape (lists,
objects, ids, strings) and collects every problem as a located `Issue`; what the fields
mean is checked by `validate`, after the legacy rules of `normalize`.

Locations: a node by its id; a connection by `connections[<index>]` (or its own `id`),
which is also the id of the native edge it becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nodeloom.errors import Issue
from nodeloom.values import kind_of

SUBAGENT_HANDLE = "subagent"


@dataclass(frozen=True, slots=True)
class WorkflowNode:
    id: str
    type: str
    data: dict[str, Any]
    position: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Connection:
    id: str  # "connections[<index>]", or the connection's own id
    source: str
    target: str
    source_handle: str | None = None
    target_handle: str | None = None

    @property
    def is_subagent(self) -> bool:
        """A tool-delegation link, not an execution edge."""
        return self.source_handle == SUBAGENT_HANDLE


@dataclass(frozen=True)
class Workflow:
    nodes: tuple[WorkflowNode, ...]
    connections: tuple[Connection, ...]
    name: str | None = None
    description: str | None = None
    dropped: tuple[str, ...] = field(default=())  # ids of legacy `end` nodes left out

    @property
    def by_id(self) -> dict[str, WorkflowNode]:
        return {node.id: node for node in self.nodes}

    def execution(self) -> list[Connection]:
        return [c for c in self.connections if not c.is_subagent]

    def subagent_links(self) -> list[Connection]:
        return [c for c in self.connections if c.is_subagent]


def read_workflow(document: Mapping[str, Any]) -> tuple[Workflow, list[Issue]]:
    """The workflow of the well-formed parts of `document`, and the shape problems."""
    issues: list[Issue] = []
    nodes = _nodes(document.get("nodes"), issues)
    key = "connections"
    if "connections" in document and "edges" in document:
        issues.append(
            Issue(
                "invalid_graph",
                "the workflow has both 'connections' and 'edges'; keep one list of connections",
                field="edges",
            )
        )
    elif "edges" in document:
        key = "edges"
    connections = _connections(document.get(key, []), key, issues)
    meta: dict[str, str] = {}
    for name in ("name", "description"):
        value = document.get(name)
        if isinstance(value, str) and value:
            meta[name] = value
        elif value is not None:
            issues.append(Issue("invalid_graph", f"'{name}' must be a string", field=name))
    return Workflow(tuple(nodes), tuple(connections), **meta), issues


def _nodes(raw: Any, issues: list[Issue]) -> list[WorkflowNode]:
    if not isinstance(raw, list):
        issues.append(
            Issue(
                "invalid_graph",
                f"a workflow needs a 'nodes' list, got {kind(raw)}",
                field="nodes",
            )
        )
        return []
    nodes: list[WorkflowNode] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"nodes[{index}]"
        if not isinstance(item, dict):
            issues.append(
                Issue("invalid_graph", f"{where} must be an object, got {kind(item)}", field=where)
            )
            continue
        node_id = item.get("id")
        if not isinstance(node_id, str) or not node_id:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"{where} needs an 'id' (a non-empty string), got {kind(node_id)}",
                    field=f"{where}.id",
                )
            )
            continue
        if node_id in seen:
            issues.append(
                Issue(
                    "duplicate_node_id",
                    f"the id '{node_id}' is used by more than one node ({where} is a second "
                    "one); node ids must be unique",
                    node_id=node_id,
                    field="id",
                )
            )
            continue
        seen.add(node_id)
        node_type = item.get("type")
        if not isinstance(node_type, str) or not node_type:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"a node needs a 'type' (start, agent, if or approval), got {kind(node_type)}",
                    node_id=node_id,
                    field="type",
                )
            )
            continue
        data = item.get("data")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"'data' must be an object, got {kind(data)}",
                    node_id=node_id,
                    field="data",
                )
            )
            continue
        nodes.append(WorkflowNode(node_id, node_type, dict(data), _position(item, issues)))
    return nodes


def _position(item: dict[str, Any], issues: list[Issue]) -> tuple[float, float] | None:
    values = []
    for axis in ("x", "y"):
        value = item.get(axis)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"'{axis}' is the node's position on the canvas, a number; got {kind(value)}",
                    node_id=item["id"],
                    field=axis,
                )
            )
            return None
        values.append(value)
    return (values[0], values[1])


def _connections(raw: Any, key: str, issues: list[Issue]) -> list[Connection]:
    if not isinstance(raw, list):
        issues.append(Issue("invalid_graph", f"'{key}' must be a list, got {kind(raw)}", field=key))
        return []
    connections: list[Connection] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        if not isinstance(item, dict):
            issues.append(
                Issue("invalid_graph", f"{where} must be an object, got {kind(item)}", field=where)
            )
            continue
        own = item.get("id")
        connection_id = own if isinstance(own, str) and own else where
        if connection_id in seen:
            issues.append(
                Issue(
                    "duplicate_edge_id",
                    f"the connection id '{connection_id}' is used twice",
                    edge_id=connection_id,
                    field="id",
                )
            )
            continue
        seen.add(connection_id)
        values: dict[str, str | None] = {}
        bad = False
        for name, required in (
            ("source", True),
            ("target", True),
            ("sourceHandle", False),
            ("targetHandle", False),
        ):
            value = item.get(name)
            if value is None and not required:
                values[name] = None
            elif not isinstance(value, str) or not value:
                what = "a node id" if required else "a handle id, or left out"
                issues.append(
                    Issue(
                        "invalid_graph",
                        f"a connection's '{name}' must be {what} (a non-empty string), got "
                        f"{kind(value)}",
                        edge_id=connection_id,
                        field=name,
                    )
                )
                bad = True
            else:
                values[name] = value
        if not bad:
            connections.append(
                Connection(
                    connection_id,
                    str(values["source"]),
                    str(values["target"]),
                    values["sourceHandle"],
                    values["targetHandle"],
                )
            )
    return connections


def kind(value: Any) -> str:
    """A value's JSON kind, for messages; an empty string is named as such."""
    return "an empty string" if value == "" else kind_of(value)
