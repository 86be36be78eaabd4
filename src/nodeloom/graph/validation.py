"""Validation: every problem in a graph, located, in one pass.

`check_graph` returns a `CheckedGraph` (definitions resolved, ports expanded, expressions
compiled, topological order) together with the list of `Issue`s. The engine compiles its
run plan from a `CheckedGraph` without analysing the graph again.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.expressions import Template
from nodeloom.graph.document import parse_graph, read_document
from nodeloom.graph.model import Edge, Graph, Node
from nodeloom.graph.parameters import (
    SETTINGS,
    check_value,
    compile_templates,
    pinned_issues,
    settings_issues,
)
from nodeloom.graph.root_agent import check_user_tools
from nodeloom.graph.sockets import can_connect, connection_refusal
from nodeloom.graph.structure import Structure, find_structure
from nodeloom.plugins.contract import ERROR_PORT, NodeDefinition, Port
from nodeloom.plugins.registry import Registry


@dataclass
class NodeInfo:
    """What validation learned about one node."""

    node: Node
    definition: NodeDefinition | None
    inputs: dict[str, Port] = field(default_factory=dict)  # spine ports and side sockets
    outputs: dict[str, Port] = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)  # "param.path" -> template
    bodies: dict[str, CheckedGraph] = field(default_factory=dict)  # graph params (Loop body)


@dataclass
class CheckedGraph:
    graph: Graph
    infos: dict[str, NodeInfo]
    order: list[str]  # topological order (empty if the graph has a cycle)
    issues: list[Issue]
    structure: Structure
    prefix: str = ""

    @property
    def ok(self) -> bool:
        return not self.issues

    def raise_for_issues(self) -> None:
        if self.issues:
            raise GraphError(self.issues)


def validate(source: Any, registry: Registry) -> CheckedGraph:
    """Read, parse and check a graph document (path, JSON text or dict)."""
    graph, issues = parse_graph(read_document(source))
    checked = check_graph(graph, registry)
    checked.issues[:0] = issues
    return checked


def check_graph(
    graph: Graph,
    registry: Registry,
    *,
    prefix: str = "",
    outer_names: Mapping[str, str] | None = None,
    extra_roots: frozenset[str] = frozenset(),
) -> CheckedGraph:
    """Check a parsed graph. `prefix`, `outer_names` and `extra_roots` are set when
    checking an inner graph (a Loop body): issues are located as `loop/inner`, nodes of
    the outer graph upstream of the container may be referenced, and `$loop` exists."""
    issues: list[Issue] = []
    infos = {node.id: _check_node(node, registry, prefix, issues) for node in graph.nodes}
    _check_names(graph, prefix, issues)
    for info in infos.values():
        for param, value in info.node.data.items():
            parameter = info.definition.parameter(param) if info.definition else None
            if parameter is not None and parameter.type == "graph" and isinstance(value, dict):
                info.bodies[param] = _check_body(
                    graph, info, param, value, registry, prefix, outer_names, issues
                )
    incoming = _check_edges(graph, infos, prefix, issues)
    _check_required(infos, incoming, prefix, issues)
    each = {n.id for n in graph.nodes if n.data.get("activation") == "each"}
    _check_activation(graph, infos, each, prefix, issues)
    order, cyclic = _topological_order(graph, each)
    if cyclic:
        issues.append(
            Issue(
                "cycle",
                "the flow graph has a cycle of nodes that wait for all their inputs, through "
                + " -> ".join(f"'{n}'" for n in cyclic)
                + "; repetition is done with a Loop node, whose body holds the repeated steps, "
                "or with nodes whose activation is `each` (every node of the cycle)",
                node_id=prefix + cyclic[0],
            )
        )
    structure, structural_issues = find_structure(
        graph,
        {node_id: info.definition for node_id, info in infos.items()},
        {
            node_id: {p: port.socket for p, port in info.inputs.items()}
            for node_id, info in infos.items()
        },
        order if not cyclic else [],
        prefix,
    )
    issues.extend(structural_issues)
    issues.extend(check_user_tools(graph, structure, prefix))
    if not cyclic:
        _check_references(
            graph, infos, order, prefix, outer_names or {}, extra_roots, structure, issues
        )
    return CheckedGraph(graph, infos, [] if cyclic else order, issues, structure, prefix)


# -- nodes ------------------------------------------------------------------------------


def _check_node(node: Node, registry: Registry, prefix: str, issues: list[Issue]) -> NodeInfo:
    where = prefix + node.id
    definition = registry.definition(node.type)
    info = NodeInfo(node, definition)
    if definition is None:
        issues.append(
            Issue(
                "unknown_node_type",
                registry.unknown_type_message(node.type),
                node_id=where,
                field="type",
            )
        )
        return info
    for parameter_id, value in node.data.items():
        parameter = definition.parameter(parameter_id)
        if parameter is None and parameter_id not in SETTINGS:
            valid = [p.id for p in definition.parameters] + sorted(SETTINGS)
            hint = difflib.get_close_matches(parameter_id, valid, n=1)
            suggestion = f"did you mean '{hint[0]}'? " if hint else ""
            issues.append(
                Issue(
                    "unknown_parameter",
                    f"'{definition.id}' has no parameter '{parameter_id}'; {suggestion}"
                    f"valid parameters: {', '.join(valid)}",
                    node_id=where,
                    field=parameter_id,
                )
            )
            continue
        if parameter is not None and parameter.type != "graph":
            for message in check_value(parameter, value):
                issues.append(
                    Issue("invalid_parameter", message, node_id=where, field=parameter_id)
                )
    issues.extend(settings_issues(node.data, where, definition))
    if definition.check is not None:
        reported = {i.field for i in issues if i.node_id == where}
        for field_name, message in definition.check(node.data):
            if field_name not in reported:  # one issue per field: the first is the clearest
                issues.append(Issue("invalid_parameter", message, node_id=where, field=field_name))
    info.templates, syntax_errors = compile_templates(definition, node.data)
    for field_name, exc in syntax_errors:
        issues.append(Issue("expression_syntax", str(exc), node_id=where, field=field_name))
    info.inputs = {port.id: port for port in definition.inputs}
    for parameter in definition.parameters:
        if parameter.hybrid:
            info.inputs[parameter.id] = Port(
                parameter.id, parameter.socket_type, parameter.label, required=False
            )
    info.outputs = {port.id: port for port in definition.output_ports(node.data)}
    if node.data.get("on_error") == "error_output" and ERROR_PORT not in info.outputs:
        info.outputs[ERROR_PORT] = Port(ERROR_PORT, "data", "Error")
    issues.extend(pinned_issues(node.data, where, info.outputs))
    return info


def _check_names(graph: Graph, prefix: str, issues: list[Issue]) -> None:
    by_name: dict[str, str] = {}
    ids = {node.id for node in graph.nodes}
    for node in graph.nodes:
        name = node.data.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            issues.append(
                Issue(
                    "invalid_parameter",
                    "'name' must be a non-empty string",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
            continue
        shown = node.name
        if shown in by_name:
            issues.append(
                Issue(
                    "duplicate_node_name",
                    f"the name '{shown}' is already used by node '{by_name[shown]}'; names are "
                    "unique in a graph because expressions reach nodes by name",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
        elif shown != node.id and shown in ids:
            issues.append(
                Issue(
                    "duplicate_node_name",
                    f"the name '{shown}' is the id of another node; expressions could not tell "
                    "them apart",
                    node_id=prefix + node.id,
                    field="name",
                )
            )
        by_name[shown] = node.id


def _check_body(
    graph: Graph,
    info: NodeInfo,
    param: str,
    value: dict[str, Any],
    registry: Registry,
    prefix: str,
    outer_names: Mapping[str, str] | None,
    issues: list[Issue],
) -> CheckedGraph:
    where = f"{prefix}{info.node.id}/"
    body, body_issues = parse_graph(value)
    for issue in body_issues:
        issues.append(
            Issue(
                issue.code,
                f"in {param}: {issue.message}",
                node_id=where + issue.node_id if issue.node_id else prefix + info.node.id,
                field=issue.field or param,
                edge_id=issue.edge_id,
            )
        )
    # Outer nodes the body may reference: every outer node upstream of the container.
    upstream = _ancestors_of(graph, info.node.id)
    visible = dict(outer_names or {})
    for node in graph.nodes:
        if node.id in upstream:
            visible[node.name] = node.id
            visible[node.id] = node.id
    checked = check_graph(
        body, registry, prefix=where, outer_names=visible, extra_roots=frozenset({"$loop"})
    )
    issues.extend(checked.issues)
    if not body.nodes:
        issues.append(
            Issue(
                "invalid_parameter",
                f"the {param} has no nodes",
                node_id=prefix + info.node.id,
                field=param,
            )
        )
    return checked


# -- edges ------------------------------------------------------------------------------


def _check_edges(
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


def _check_required(
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


# -- order and references ---------------------------------------------------------------


def _topological_order(graph: Graph, each: set[str]) -> tuple[list[str], list[str]]:
    """An execution order, or ([], nodes on a forbidden cycle).

    Cycles are allowed when every node on them has `activation: each` (the run's step
    limit bounds them); the order is then topological over the strongly connected
    components, members in file order."""
    known = graph.by_id
    successors: dict[str, list[str]] = {node.id: [] for node in graph.nodes}
    for edge in graph.edges:
        if edge.source in known and edge.target in known:
            successors[edge.source].append(edge.target)
    components = _components(graph, successors)
    component_of = {n: i for i, members in enumerate(components) for n in members}
    for members in components:
        looped = len(members) > 1 or members[0] in successors[members[0]]
        if looped and not set(members) <= each:
            inside = set(members)
            return [], _one_cycle(
                inside, {n: [m for m in successors[n] if m in inside] for n in inside}
            )
    indegree = [0] * len(components)
    for source, targets in successors.items():
        for target in targets:
            if component_of[source] != component_of[target]:
                indegree[component_of[target]] += 1
    position = {node.id: i for i, node in enumerate(graph.nodes)}
    ready = sorted(
        (i for i, d in enumerate(indegree) if d == 0),
        reverse=True,
        key=lambda i: min(position[n] for n in components[i]),
    )
    order: list[str] = []
    while ready:
        current = ready.pop()
        order.extend(sorted(components[current], key=position.__getitem__))
        for node_id in components[current]:
            for target in successors[node_id]:
                other = component_of[target]
                if other != current:
                    indegree[other] -= 1
                    if indegree[other] == 0:
                        ready.append(other)
    return order, []


def _components(graph: Graph, successors: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in (node.id for node in graph.nodes):
        if root in index:
            continue
        work = [(root, iter(successors[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                found.append(members)
    return found


def _check_activation(
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


def _one_cycle(remaining: set[str], successors: dict[str, list[str]]) -> list[str]:
    start = min(remaining)
    path, seen = [start], {start: 0}
    current = start
    while True:
        current = next(n for n in successors[current] if n in remaining)
        if current in seen:
            return [*path[seen[current] :], current]
        seen[current] = len(path)
        path.append(current)


def _ancestors_of(graph: Graph, node_id: str) -> set[str]:
    predecessors: dict[str, list[str]] = {}
    for edge in graph.edges:
        predecessors.setdefault(edge.target, []).append(edge.source)
    seen: set[str] = set()
    stack = [node_id]
    while stack:
        for pred in predecessors.get(stack.pop(), []):
            if pred not in seen:
                seen.add(pred)
                stack.append(pred)
    return seen


def _check_references(
    graph: Graph,
    infos: dict[str, NodeInfo],
    order: list[str],
    prefix: str,
    outer_names: Mapping[str, str],
    extra_roots: frozenset[str],
    structure: Structure,
    issues: list[Issue],
) -> None:
    referencing = [i for i in infos.values() if i.templates]
    if not referencing:
        return
    names: dict[str, str] = {}
    for node in graph.nodes:
        names[node.id] = node.id
        names[node.name] = node.id
    has_input = {edge.target for edge in graph.edges}
    ancestors = _AncestorBits(graph, order, structure)
    for info in referencing:
        for field_name, template in info.templates.items():
            for ref in sorted(template.references):
                target = names.get(ref)
                if target is None:
                    if ref in outer_names:
                        continue
                    choices = list(names) + list(outer_names)
                    hint = difflib.get_close_matches(ref, choices, n=1)
                    suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
                    issues.append(
                        Issue(
                            "expression_unknown_node",
                            f"{template.source!r} refers to node '{ref}', which is not in the "
                            f"graph{suggestion}",
                            node_id=prefix + info.node.id,
                            field=field_name,
                        )
                    )
                elif target == info.node.id or not ancestors.is_ancestor(target, info.node.id):
                    issues.append(
                        Issue(
                            "expression_not_upstream",
                            f"{template.source!r} refers to node '{ref}', which is not upstream "
                            f"of '{info.node.name}'; an expression can read only nodes that run "
                            "before it (connect them with an edge)",
                            node_id=prefix + info.node.id,
                            field=field_name,
                        )
                    )
            parameter = (
                info.definition.parameter(field_name.split(".")[0].split("[")[0])
                if info.definition
                else None
            )
            deferred = parameter is not None and parameter.type == "expression"
            unknown_roots = (
                template.roots - _ROOTS - extra_roots - (_DEFERRED if deferred else frozenset())
            )
            for root in sorted(unknown_roots):
                issues.append(
                    Issue(
                        "expression_unknown_name",
                        f"{template.source!r} uses '{root}', which is not available here"
                        + (" ($loop exists only inside a Loop body)" if root == "$loop" else ""),
                        node_id=prefix + info.node.id,
                        field=field_name,
                    )
                )
            if (
                template.uses_input
                and info.node.id not in has_input
                and not extra_roots
                and not deferred
            ):
                issues.append(
                    Issue(
                        "expression_no_input",
                        f"{template.source!r} reads $json, but nothing is wired into "
                        f"'{info.node.name}'; connect a node to its input or use $('Node')",
                        node_id=prefix + info.node.id,
                        field=field_name,
                    )
                )


_ROOTS = frozenset({"$json", "input", "$trigger", "$vars", "$run", "$credentials", "$"})
# A parameter the executor evaluates itself (Loop's `until`) also sees $loop.
_DEFERRED = frozenset({"$loop"})


class _AncestorBits:
    """Ancestor sets as Python int bitsets, built once in topological order. Structural
    edges do not count: a tool source produces no output an expression could read."""

    def __init__(self, graph: Graph, order: list[str], structure: Structure) -> None:
        self.index = {node_id: i for i, node_id in enumerate(order)}
        predecessors: dict[str, list[str]] = {}
        for edge in graph.edges:
            # Dangling edges are reported on their own; they connect nothing here.
            known = edge.source in self.index and edge.target in self.index
            if known and edge.id not in structure.edges:
                predecessors.setdefault(edge.target, []).append(edge.source)
        self.bits: dict[str, int] = {}
        for node_id in order:
            bits = 0
            for pred in predecessors.get(node_id, ()):
                # In a cycle of each-nodes a predecessor may come later in the order.
                bits |= self.bits.get(pred, 0) | (1 << self.index[pred])
            self.bits[node_id] = bits
        changed = any(
            self.index[p] >= self.index[n]
            for n, ps in predecessors.items()
            for p in ps
            if n in self.index
        )
        while changed:  # cycles: propagate until nothing changes (small format graphs)
            changed = False
            for node_id in order:
                bits = self.bits[node_id]
                for pred in predecessors.get(node_id, ()):
                    bits |= self.bits[pred] | (1 << self.index[pred])
                if bits != self.bits[node_id]:
                    self.bits[node_id] = bits
                    changed = True

    def is_ancestor(self, candidate: str, node_id: str) -> bool:
        return bool(self.bits[node_id] >> self.index[candidate] & 1)
