"""The floors: the same work as each benchmark, in plain Python and asyncio, no engine."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from pathlib import Path
from typing import Any


async def trivial(value: Any) -> Any:
    return value


async def chain(n: int) -> Any:
    """A plain asyncio loop awaiting N trivial coroutines in sequence."""
    value: Any = "hi"
    for _ in range(n):
        value = await trivial(value)
    return value


async def fan_out(branches: int, seconds: float) -> None:
    await asyncio.gather(*(asyncio.sleep(seconds) for _ in range(branches)))


async def three_steps(seconds: float) -> Any:
    """What a 3-node run does: a trivial step, an awaited pause, a trivial step."""
    value = await trivial("hi")
    await asyncio.sleep(seconds)
    return await trivial(value)


async def concurrent_runs(runs: int, seconds: float) -> int:
    results = await asyncio.gather(*(three_steps(seconds) for _ in range(runs)))
    return len(results)


def load_text(text: str) -> list[str]:
    """`json.loads` of a graph document plus a topological sort (Kahn) of its nodes."""
    return topological_order(json.loads(text))


def load_file(path: Path) -> list[str]:
    return load_text(path.read_text(encoding="utf-8"))


def topological_order(document: dict[str, Any]) -> list[str]:
    indegree = {n["id"]: 0 for n in document["nodes"]}
    targets: dict[str, list[str]] = {node_id: [] for node_id in indegree}
    for e in document["edges"]:
        targets[e["source"]].append(e["target"])
        indegree[e["target"]] += 1
    ready = deque(node_id for node_id, degree in indegree.items() if degree == 0)
    order = []
    while ready:
        node_id = ready.popleft()
        order.append(node_id)
        for target in targets[node_id]:
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    if len(order) != len(indegree):
        raise ValueError("the graph has a cycle")
    return order
