"""Ordering: the execution order of a graph, its forbidden cycles, and ancestors.

`ancestors` is the one walk for "every node with a path to this one"; validation and the
engine's run plan (`FlowPlan.ancestors`) both use it. `AncestorBits` answers the same
question for every node at once, as bitsets, for checks that ask it many times.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from nodeloom.graph.model import Graph
from nodeloom.graph.structure import Structure

T = TypeVar("T", bound=Hashable)


def ancestors(start: T, predecessors: Callable[[T], Iterable[T]]) -> set[T]:
    """Every node with a path to `start`, given each node's direct predecessors (`start`
    itself only when it is on a cycle). Given successors instead, the descendants."""
    seen: set[T] = set()
    stack = [start]
    while stack:
        for pred in predecessors(stack.pop()):
            if pred not in seen:
                seen.add(pred)
                stack.append(pred)
    return seen


def upstream_of(graph: Graph, node_id: str) -> set[str]:
    """Every node of `graph` with a path of edges (of any kind) to `node_id`."""
    predecessors: dict[str, list[str]] = {}
    for edge in graph.edges:
        predecessors.setdefault(edge.target, []).append(edge.source)
    return ancestors(node_id, lambda n: predecessors.get(n, ()))


def topological_order(graph: Graph, each: set[str]) -> tuple[list[str], list[str]]:
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


class AncestorBits:
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


__all__ = ["AncestorBits", "ancestors", "topological_order", "upstream_of"]
