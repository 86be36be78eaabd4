"""Picking events out of a run's event list in tests."""

from __future__ import annotations

from collections.abc import Iterable

from nodeloom.plugins.contract import Event


def of_type(events: Iterable[Event], event_type: str, node_id: str | None = None) -> list[Event]:
    """The events of one type, optionally of one node, in order."""
    return [
        e
        for e in events
        if e.event_type == event_type and (node_id is None or e.node_id == node_id)
    ]
