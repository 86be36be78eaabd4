"""What a run answered: the value an evaluation scores, and its text."""

from __future__ import annotations

import json
from typing import Any

from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult

_TEXT_KEYS = ("text", "response", "reply", "answer", "message", "content")


def end_nodes(flow: Flow) -> list[str]:
    """The names of the nodes no edge leaves, in the graph's order."""
    sources = {edge.source for edge in flow.graph.edges}
    return [node.name for node in flow.graph.nodes if node.id not in sources]


def answer_of(result: RunResult, nodes: list[str]) -> Any:
    """The `output` port (else the only port, else every port) of the last of `nodes` that
    fired; None if none did."""
    for name in reversed(nodes):
        ports = result.outputs.get(name)
        if ports:
            if "output" in ports:
                return ports["output"]
            return next(iter(ports.values())) if len(ports) == 1 else ports
    return None


def text_of(value: Any) -> str:
    """A string as is; an object with one text field (`text`, `response`, ...) that field;
    anything else as compact JSON with sorted keys."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _TEXT_KEYS:
            if isinstance(value.get(key), str):
                return value[key]
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
