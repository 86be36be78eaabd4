"""The shape of an Ethan graph: its entry nodes and the cycles it may not have.

An entry node is a node nothing leads to: no edge, no router case or default, no loop
(as its body) and (unlike the original, where a fallback node ran at the start of every
run) no `on_error.to`. The run starts at every entry node. A cycle made only of plain
edges (no `when`, not from a router) could never end and is refused; a cycle through a
router, a conditional edge or a loop is bounded by the step limit.
"""

from __future__ import annotations

from collections.abc import Iterator

from nodeloom.errors import Issue
from nodeloom.formats.ethan.schema import Graph, LoopNode, Node, RouterNode


def incoming(graph: Graph) -> dict[str, int]:
    """How many things lead to each node: edges, router targets, loop bodies and (unlike
    the original, where a fallback node ran at the start) `on_error.to` targets."""
    counts = {node.id: 0 for _, node in graph.nodes}
    for _, edge in graph.edges:
        counts[edge.to] = counts.get(edge.to, 0) + 1
    for _, node in graph.nodes:
        for target in _led_to(node):
            counts[target] = counts.get(target, 0) + 1
    return counts


def _led_to(node: Node) -> list[str]:
    targets = []
    if isinstance(node, RouterNode):
        targets += [case.to for case in node.cases]
        if node.default:
            targets.append(node.default)
    if isinstance(node, LoopNode):
        targets.append(node.body)
    if node.on_error is not None and node.on_error.to:
        targets.append(node.on_error.to)
    return targets


def entries(graph: Graph) -> list[str]:
    counts = incoming(graph)
    return [node.id for _, node in graph.nodes if counts.get(node.id, 0) == 0]


def shape_issues(graph: Graph) -> list[Issue]:
    issues = []
    if graph.nodes and not entries(graph):
        issues.append(
            Issue(
                "invalid_graph",
                "the graph has no entry node: every node is the target of an edge, a router, "
                "a loop or an on_error, so nothing can start it",
                field=f"{graph.where}.nodes",
            )
        )
    cycle = _plain_cycle(graph)
    if cycle:
        issues.append(
            Issue(
                "cycle",
                "the plain edges "
                + " -> ".join(f"'{n}'" for n in cycle)
                + " form a cycle that nothing ends; give one of them a `when`, or repeat "
                "with a router or a loop",
                node_id=cycle[0],
                field=f"{graph.where}.edges",
            )
        )
    return issues


def _plain_cycle(graph: Graph) -> list[str] | None:
    """A cycle made only of unconditional edges whose sources are not routers."""
    routers = {node.id for _, node in graph.nodes if isinstance(node, RouterNode)}
    successors: dict[str, list[str]] = {node.id: [] for _, node in graph.nodes}
    for _, edge in graph.edges:
        if edge.when is None and edge.from_ not in routers and edge.from_ in successors:
            successors[edge.from_].append(edge.to)
    state: dict[str, int] = {}
    for start in successors:
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(successors[start]))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(child) == 1:
                return [*path[path.index(child) :], child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(successors.get(child, []))))
    return None


def loop_body_cycles(graph: Graph) -> list[Issue]:
    """A loop whose body is (through other loops) itself could never be converted."""
    bodies = {node.id: node.body for _, node in graph.nodes if isinstance(node, LoopNode)}
    where = {node.id: graph.node_where(i) for i, node in graph.nodes}
    issues = []
    for start in bodies:
        seen = [start]
        current = bodies[start]
        while current in bodies:
            if current == start:
                message = (
                    "a loop's body cannot be the loop itself"
                    if len(seen) == 1
                    else "loops are each other's bodies: " + " -> ".join([*seen, start])
                )
                issues.append(Issue("cycle", message, node_id=start, field=f"{where[start]}.body"))
                break
            if current in seen:
                break
            seen.append(current)
            current = bodies[current]
    return issues


__all__ = ["entries", "incoming", "loop_body_cycles", "shape_issues"]
