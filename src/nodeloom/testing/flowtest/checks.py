"""A run checked against a test's `expect`: each failed expectation as a readable line."""

from __future__ import annotations

from typing import Any

from nodeloom.engine.result import RunResult
from nodeloom.graph.model import Graph
from nodeloom.plugins.contract import Event
from nodeloom.testing.flowtest.matching import mismatches
from nodeloom.testing.flowtest.model import EventPattern, Expect


def check(expect: Expect, result: RunResult, events: list[Event], graph: Graph) -> list[str]:
    names = _Names(graph)
    problems = names.unknown(expect)
    if problems:
        return problems
    if result.status.value != expect.status:
        error = f": {result.error.get('message')}" if result.error else ""
        problems.append(f"status: expected {expect.status}, got {result.status.value}{error}")
    outputs = {names.name(key): value for key, value in result.outputs.items()}
    skipped = {e.node_name: e.data.get("reason") for e in events if e.event_type == "skipped"}
    for ref, expected in expect.outputs.items():
        name = names.name(ref)
        if name not in outputs:
            problems.append(f"outputs.{ref}: {_absent(name, skipped)}")
        else:
            problems += mismatches(expected, outputs[name], f"outputs.{ref}")
    for ref, ports in expect.fired.items():
        name = names.name(ref)
        got = sorted(outputs.get(name, {}))
        if sorted(ports) != got:
            problems.append(f"fired.{ref}: expected {sorted(ports)}, got {got}")
    ran = {e.node_name for e in events if e.event_type == "completed"}
    for ref in expect.ran:
        if names.name(ref) not in ran:
            problems.append(f"ran: {ref} did not complete ({_absent(names.name(ref), skipped)})")
    for ref in expect.skipped:
        if names.name(ref) not in skipped:
            state = "ran" if names.name(ref) in ran else "was not skipped"
            problems.append(f"skipped: expected {ref} to be skipped, but it {state}")
    if expect.events:
        problems += _in_order(expect.events, events, names)
    if expect.error is not None:
        problems += mismatches(expect.error, result.error, "error")
    return problems


def _absent(name: str, skipped: dict[str | None, Any]) -> str:
    if name in skipped:
        return f"{name} was skipped: {skipped[name]}"
    return f"{name} did not run"


def _in_order(patterns: list[EventPattern], events: list[Event], names: _Names) -> list[str]:
    """The patterns must match events in this order; other events may come between."""
    position = 0
    for index, pattern in enumerate(patterns):
        while position < len(events) and not _fits(pattern, events[position], names):
            position += 1
        if position == len(events):
            seen = ", ".join(_describe(e) for e in events if e.event_type != "progress")
            return [
                f"events[{index}]: no {pattern.describe()} event"
                + (" after the ones before it" if index else "")
                + f"; the run's events (progress left out): {seen}"
            ]
        position += 1
    return []


def _fits(pattern: EventPattern, event: Event, names: _Names) -> bool:
    if event.event_type != pattern.type:
        return False
    if pattern.node is not None and event.node_name != names.name(pattern.node):
        return False
    return pattern.data is None or not mismatches(pattern.data, event.data, "data")


def _describe(event: Event) -> str:
    return event.event_type + (f" {event.node_name}" if event.node_name else "")


class _Names:
    """Node references (a name or an id) resolved to node names, and checked."""

    def __init__(self, graph: Graph) -> None:
        self.by_name = {node.name for node in graph.nodes}
        self.by_id = {node.id: node.name for node in graph.nodes}

    def name(self, ref: str) -> str:
        if ref in self.by_name:
            return ref
        return self.by_id.get(ref, ref)

    def unknown(self, expect: Expect) -> list[str]:
        refs = [
            *(("outputs", r) for r in expect.outputs),
            *(("fired", r) for r in expect.fired),
            *(("ran", r) for r in expect.ran),
            *(("skipped", r) for r in expect.skipped),
            *(("events", p.node) for p in expect.events if p.node is not None),
        ]
        valid = ", ".join(sorted(self.by_name))
        return [
            f"{field}: the flow has no node named {ref!r} (its nodes: {valid})"
            for field, ref in refs
            if ref not in self.by_name and ref not in self.by_id
        ]
