"""Edge checks: ends and handles that exist, sockets that connect, one edge per port
unless it takes many, required parameters given or wired, activation agreed along edges."""

from __future__ import annotations

import difflib

from nodeloom.errors import Issue
from nodeloom.graph.checked import NodeInfo
from nodeloom.graph.definitions import ERROR_PORT
from nodeloom.graph.model import Edge, Graph
from nodeloom.graph.sockets import can_connect, connection_refusal


def check_edges(
    graph: Graph, infos: dict[str, NodeInfo], prefix: str, issues: list[Issue]
) -> dict[tuple[str, str], list[Edge]]:
    incoming: dict[tuple[str, str], list[Edge]] = {}
    ids = list(infos)
    for edge in graph.edges:
        source, target = infos.get(edge.source), infos.get(edge.target)
        for end, info in (("source", source), ("target", target)):
            if info is None:
                missing = edge.source if end == "source" else edge.target
                hint = difflib.get_close_matches(missing, ids, n=1)
                suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
                issues.append(
                    Issue(
                        "dangling_edge",
                        f"the edge's {end} '{missing}' is not a node of this graph{suggestion}",
                        edge_id=edge.id,
                        field=end,
                    )
                )
        if source is None or target is None:
            continue
        if edge.source == edge.target and source.node.data.get("activation") != "each":
            issues.append(
                Issue(
                    "cycle",
                    f"the edge connects node '{edge.source}' to itself",
                    edge_id=edge.id,
                    node_id=prefix + edge.source,
                )
            )
            continue
        if source.definition is None or target.definition is None:
            continue
        out_port = source.outputs.get(edge.source_handle)
        if out_port is None:
            issues.append(_unknown_handle(edge, source, "sourceHandle", prefix))
            continue
        in_port = target.inputs.get(edge.target_handle)
        if in_port is None:
            issues.append(_unknown_handle(edge, target, "targetHandle", prefix))
            continue
        if not can_connect(out_port.socket, in_port.socket):
            issues.append(
                Issue(
                    "incompatible_socket",
                    f"'{source.node.name}'.{out_port.id} -> "
                    f"'{target.node.name}'.{in_port.id}: "
                    + connection_refusal(out_port.socket, in_port.socket),
                    edge_id=edge.id,
                    node_id=prefix + edge.target,
                    field=edge.target_handle,
                )
            )
            continue
        key = (edge.target, edge.target_handle)
        if (
            key in incoming
            and not in_port.multiple
            and target.node.data.get("activation") != "each"  # values arrive one at a time
        ):
            issues.append(
                Issue(
                    "multiple_edges",
                    f"port '{in_port.id}' of '{target.node.name}' already has an incoming edge "
                    f"('{incoming[key][0].id}'); only ports that accept many (Merge) take "
                    "several: put a Merge node in front",
                    edge_id=edge.id,
                    node_id=prefix + edge.target,
                    field=edge.target_handle,
                )
            )
            continue
        incoming.setdefault(key, []).append(edge)
    return incoming


def _unknown_handle(edge: Edge, info: NodeInfo, key: str, prefix: str) -> Issue:
    is_source = key == "sourceHandle"
    handle = edge.source_handle if is_source else edge.target_handle
    ports = info.outputs if is_source else info.inputs
    valid = list(ports)
    hint = difflib.get_close_matches(handle, valid, n=1)
    suggestion = f"did you mean '{hint[0]}'? " if hint else ""
    extra = ""
    if is_source and handle == ERROR_PORT:
        extra = " (the error port exists when the node's on_error is 'error_output')"
    kind = "output" if is_source else "input"
    return Issue(
        "unknown_handle",
        f"'{info.node.name}' ({info.node.type}) has no {kind} port '{handle}'{extra}; "
        f"{suggestion}valid {kind} ports: {', '.join(valid) or 'none'}",
        edge_id=edge.id,
        node_id=prefix + info.node.id,
        field=key,
    )


def check_required(
    infos: dict[str, NodeInfo],
    incoming: dict[tuple[str, str], list[Edge]],
    prefix: str,
    issues: list[Issue],
) -> None:
    for node_id, info in infos.items():
        if info.definition is None:
            continue
        for parameter in info.definition.parameters:
            if not parameter.required or parameter.default is not None:
                continue
            value = info.node.data.get(parameter.id)
            wired = (node_id, parameter.id) in incoming
            if (value is None or value == "") and not wired:
                issues.append(
                    Issue(
                        "missing_parameter",
                        f"'{info.node.name}' needs '{parameter.id}'"
                        + (" (or a wire into its socket)" if parameter.hybrid else ""),
                        node_id=prefix + node_id,
                        field=parameter.id,
                    )
                )


def check_activation(
    graph: Graph, infos: dict[str, NodeInfo], each: set[str], prefix: str, issues: list[Issue]
) -> None:
    """A join node counts each incoming edge once: it cannot take edges from a node that
    may fire several times."""
    for edge in graph.edges:
        if edge.source in each and edge.target not in each and edge.target in infos:
            issues.append(
                Issue(
                    "activation_mismatch",
                    f"'{infos[edge.target].node.name}' waits for all its inputs once (activation "
                    f"join), but '{infos[edge.source].node.name}' may fire several times "
                    "(activation each); set activation: each on it too",
                    node_id=prefix + edge.target,
                    edge_id=edge.id,
                    field="activation",
                )
            )
