"""Reading the native graph document (a JSON file or a dict) into a `Graph`.

Parsing is strict and collects every problem it finds, each located by node id, edge id
and field, instead of stopping at the first. Well-formed parts are kept so validation can
report further problems in the same pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.graph.model import Edge, Graph, Node
from nodeloom.values import kind_of

_TOP_LEVEL = {
    "name",
    "description",
    "version",
    "variables",
    "limits",
    "error_flow",
    "nodes",
    "edges",
    "format",
}


def read_document(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A graph document from a path, JSON text, or a dict; GraphError if unreadable."""
    if isinstance(source, Mapping):
        return dict(source)
    text: str
    origin: str
    if isinstance(source, Path) or not str(source).lstrip().startswith(("{", "[")):
        path = Path(source)
        origin = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise GraphError([Issue("file_not_found", f"no such file: {path}")]) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise GraphError([Issue("file_unreadable", f"cannot read {path}: {exc}")]) from None
    else:
        text, origin = str(source), "<text>"
    if origin.endswith((".yaml", ".yml")):
        import yaml

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise GraphError(
                [Issue("invalid_yaml", f"{origin} is not valid YAML: {exc}")]
            ) from None
    else:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GraphError(
                [
                    Issue(
                        "invalid_json",
                        f"{origin} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                        f"column {exc.colno}",
                    )
                ]
            ) from None
    if not isinstance(document, dict):
        raise GraphError(
            [
                Issue(
                    "invalid_graph",
                    f"{origin}: a graph is a JSON object with 'nodes' and "
                    f"'edges', got {kind_of(document)}",
                )
            ]
        )
    return document


def parse_graph(document: Mapping[str, Any]) -> tuple[Graph, list[Issue]]:
    """Parse a graph document. Returns the graph of the well-formed parts and the issues."""
    issues: list[Issue] = []
    for key in document:
        if key not in _TOP_LEVEL:
            issues.append(
                Issue(
                    "unknown_field",
                    f"unknown top-level field '{key}'; valid "
                    f"fields: {', '.join(sorted(_TOP_LEVEL))}",
                    field=key,
                )
            )
    nodes = _parse_nodes(document.get("nodes"), issues)
    edges = _parse_edges(document.get("edges", []), issues)
    variables = document.get("variables") or {}
    if not isinstance(variables, dict):
        issues.append(
            Issue(
                "invalid_graph",
                f"'variables' must be an object, got {kind_of(variables)}",
                field="variables",
            )
        )
        variables = {}
    limits = document.get("limits") or {}
    if not isinstance(limits, dict) or not all(
        key == "max_steps" and isinstance(value, int) and not isinstance(value, bool) and value > 0
        for key, value in limits.items()
    ):
        issues.append(
            Issue(
                "invalid_graph", "'limits' is {\"max_steps\": <a positive integer>}", field="limits"
            )
        )
        limits = {}
    meta: dict[str, Any] = {}
    for key in ("name", "description", "error_flow"):
        value = document.get(key)
        if value is not None and not isinstance(value, str):
            issues.append(Issue("invalid_graph", f"'{key}' must be a string", field=key))
        elif value is not None:
            meta[key] = value
    version = document.get("version")
    if version is not None and not isinstance(version, (str, int)):
        issues.append(
            Issue("invalid_graph", "'version' must be a string or integer", field="version")
        )
        version = None
    graph = Graph(
        tuple(nodes), tuple(edges), version=version, variables=variables, limits=limits, **meta
    )
    return graph, issues


def load_graph(source: str | Path | Mapping[str, Any]) -> Graph:
    """Read and parse; raise GraphError with every issue if the document is malformed."""
    graph, issues = parse_graph(read_document(source))
    if issues:
        raise GraphError(issues)
    return graph


def _parse_nodes(raw: Any, issues: list[Issue]) -> list[Node]:
    if raw is None:
        issues.append(Issue("invalid_graph", "a graph needs a 'nodes' list", field="nodes"))
        return []
    if not isinstance(raw, list):
        issues.append(
            Issue("invalid_graph", f"'nodes' must be a list, got {kind_of(raw)}", field="nodes")
        )
        return []
    nodes: list[Node] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"nodes[{index}]"
        if not isinstance(item, dict):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"{where} must be an object, got {kind_of(item)}",
                    field=where,
                )
            )
            continue
        node_id = item.get("id")
        if not isinstance(node_id, str) or not node_id:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"{where} needs an 'id' (a non-empty string)",
                    field=f"{where}.id",
                )
            )
            continue
        node_type = item.get("type")
        if not isinstance(node_type, str) or not node_type:
            issues.append(
                Issue(
                    "invalid_graph",
                    "a node needs a 'type' (a non-empty string)",
                    node_id=node_id,
                    field="type",
                )
            )
            continue
        data = item.get("data", {})
        if data is None:
            data = {}
        if not isinstance(data, dict):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"'data' must be an object, got {kind_of(data)}",
                    node_id=node_id,
                    field="data",
                )
            )
            continue
        if node_id in seen:
            issues.append(
                Issue(
                    "duplicate_node_id",
                    f"the id '{node_id}' is used by more than one node; node ids must be unique",
                    node_id=node_id,
                    field="id",
                )
            )
            continue
        seen.add(node_id)
        nodes.append(Node(node_id, node_type, data, _position(item.get("position"))))
    return nodes


def _parse_edges(raw: Any, issues: list[Issue]) -> list[Edge]:
    if not isinstance(raw, list):
        issues.append(
            Issue("invalid_graph", f"'edges' must be a list, got {kind_of(raw)}", field="edges")
        )
        return []
    edges: list[Edge] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"edges[{index}]"
        if not isinstance(item, dict):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"{where} must be an object, got {kind_of(item)}",
                    field=where,
                )
            )
            continue
        edge_id = item.get("id")
        if edge_id is None:
            edge_id = where
        if not isinstance(edge_id, str):
            issues.append(Issue("invalid_graph", f"{where}.id must be a string", field=where))
            continue
        bad = False
        values: dict[str, str] = {}
        for key, default in (
            ("source", None),
            ("target", None),
            ("sourceHandle", "output"),
            ("targetHandle", "input"),
        ):
            value = item.get(key, default)
            if value is None:
                value = default
            if not isinstance(value, str) or not value:
                issues.append(
                    Issue(
                        "invalid_graph",
                        f"an edge needs '{key}' (a non-empty string)",
                        edge_id=edge_id,
                        field=key,
                    )
                )
                bad = True
            else:
                values[key] = value
        if bad:
            continue
        if edge_id in seen:
            issues.append(
                Issue(
                    "duplicate_edge_id",
                    f"the edge id '{edge_id}' is used twice",
                    edge_id=edge_id,
                    field="id",
                )
            )
            continue
        seen.add(edge_id)
        edges.append(
            Edge(
                edge_id,
                values["source"],
                values["sourceHandle"],
                values["target"],
                values["targetHandle"],
            )
        )
    return edges


def _position(raw: Any) -> tuple[float, float] | None:
    if isinstance(raw, dict):
        x, y = raw.get("x"), raw.get("y")
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return (float(x), float(y))
    return None
