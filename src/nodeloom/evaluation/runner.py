"""Running a flow over every row of a dataset, concurrently, and scoring each answer."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nodeloom.engine.flow import Flow
from nodeloom.errors import GraphError
from nodeloom.evaluation.answer import answer_of, end_nodes
from nodeloom.evaluation.dataset import Row
from nodeloom.evaluation.scorers import Score, Scorer


@dataclass
class RowResult:
    id: str
    input: Any
    expected: Any
    answer: Any = None
    status: str = "completed"
    run_id: str | None = None
    error: str | None = None
    duration_ms: float = 0.0
    scores: dict[str, Score] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "scores"}
        data["scores"] = {n: {"score": s.value, "reason": s.reason} for n, s in self.scores.items()}
        return data


def flow_version(flow: Flow) -> str:
    """The graph's own `version` if it has one, else `sha-` and the start of the sha256 of
    its document (so any edit makes a new version)."""
    if flow.graph.version not in (None, ""):
        return str(flow.graph.version)
    document = json.dumps(flow.document or {}, sort_keys=True, ensure_ascii=False, default=str)
    return "sha-" + hashlib.sha256(document.encode()).hexdigest()[:12]


async def evaluate(
    flow: Flow,
    rows: tuple[Row, ...],
    scorers: list[Scorer],
    *,
    concurrency: int = 4,
    output_node: str | None = None,
    on_row: Callable[[RowResult], None] | None = None,
) -> list[RowResult]:
    """Every row run and scored, at most `concurrency` runs at once; results in row order."""
    if output_node is not None:
        flow.check_node(output_node, "--output")
        node = flow.graph.node(output_node)
        nodes = [node.name if node is not None else output_node]
    else:
        nodes = end_nodes(flow)
    limit = asyncio.Semaphore(concurrency)

    async def one(row: Row) -> RowResult:
        async with limit:
            result = await _run_row(flow, row, nodes, scorers)
        if on_row is not None:
            on_row(result)
        return result

    return list(await asyncio.gather(*(one(row) for row in rows)))


async def _run_row(flow: Flow, row: Row, nodes: list[str], scorers: list[Scorer]) -> RowResult:
    outcome = RowResult(row.id, row.input, row.expected)
    began = time.perf_counter()
    trigger = dict(row.trigger or {})
    if row.inputs is not None:
        trigger["inputs"] = row.inputs
    try:
        result = await flow.run(row.input, trigger=trigger or None)
    except GraphError as exc:
        outcome.status, outcome.error = "invalid", str(exc)
    else:
        outcome.run_id, outcome.status = result.run_id, result.status.value
        outcome.answer = answer_of(result, nodes)
        if result.error:
            outcome.error = str(result.error.get("message", result.error))
    outcome.duration_ms = (time.perf_counter() - began) * 1000
    for scorer in scorers:
        if outcome.status != "completed":
            outcome.scores[scorer.name] = Score(0.0, f"the run {outcome.status}: {outcome.error}")
            continue
        try:
            outcome.scores[scorer.name] = await scorer.score(row, outcome.answer)
        except Exception as exc:  # a judge that fails scores 0 and says why
            outcome.scores[scorer.name] = Score(0.0, f"the scorer failed: {exc}"[:500])
    return outcome


def summary(rows: list[RowResult], scorers: list[str]) -> dict[str, float]:
    """The mean score of each scorer over every row."""
    return {
        name: round(sum(r.scores[name].value for r in rows) / len(rows), 4) if rows else 0.0
        for name in scorers
    }
