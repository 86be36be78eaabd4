"""Builders for seed-002 workflow documents, and flows closed after each test.

wf.doc(wf.start("s", initialInput="hi"), wf.agent("a"), wf.link("s", "a"))
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest

import nodeloom

_x = itertools.count(0, 200)


def _node(node_id: str, node_type: str, **data: Any) -> dict[str, Any]:
    return {"id": node_id, "type": node_type, "x": next(_x), "y": 0, "data": data}


def start(node_id: str = "start", **data: Any) -> dict[str, Any]:
    return _node(node_id, "start", **data)


def agent(node_id: str, **data: Any) -> dict[str, Any]:
    return _node(node_id, "agent", **data)


def if_node(node_id: str, *conditions: tuple[str, str], **data: Any) -> dict[str, Any]:
    if conditions:
        data["conditions"] = [{"operator": op, "value": value} for op, value in conditions]
    return _node(node_id, "if", **data)


def approval(node_id: str, **data: Any) -> dict[str, Any]:
    return _node(node_id, "approval", **data)


def link(
    source: str,
    target: str,
    source_handle: str | None = "output",
    target_handle: str | None = "input",
) -> dict[str, Any]:
    connection = {"source": source, "target": target}
    if source_handle is not None:
        connection["sourceHandle"] = source_handle
    if target_handle is not None:
        connection["targetHandle"] = target_handle
    return connection


def subagent(parent: str, child: str, target_handle: str | None = "input") -> dict[str, Any]:
    return link(parent, child, "subagent", target_handle)


def doc(*parts: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A workflow document from node and connection parts (told apart by their keys)."""
    return {
        **top,
        "nodes": [p for p in parts if "type" in p],
        "connections": [p for p in parts if "source" in p],
    }


@pytest.fixture
def wf() -> SimpleNamespace:
    return SimpleNamespace(
        start=start,
        agent=agent,
        if_node=if_node,
        approval=approval,
        link=link,
        subagent=subagent,
        doc=doc,
    )


@pytest.fixture
async def load():
    """`load(document)`: nodeloom.load, closed when the test ends (compiled agents hold
    HTTP clients)."""
    flows: list[nodeloom.Flow] = []

    def _load(document: Any, **options: Any) -> nodeloom.Flow:
        flows.append(nodeloom.load(document, **options))
        return flows[-1]

    yield _load
    for flow in flows:
        await flow.aclose()
