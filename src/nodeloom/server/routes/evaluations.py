"""Evaluations (`nodeloom eval`), read-only: the run history page shows them."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from nodeloom.evaluation import store
from nodeloom.server.errors import ApiError
from nodeloom.server.routes.responses import errors

router = APIRouter(tags=["evaluations"])


class EvaluationFlow(BaseModel):
    name: str | None = None
    path: str | None = None
    version: str


class EvaluationDataset(BaseModel):
    path: str
    sha256: str
    rows: int


class EvaluationSummary(BaseModel):
    id: str
    created_at: str
    duration_s: float
    flow: EvaluationFlow
    dataset: EvaluationDataset
    scorers: list[dict[str, Any]]
    summary: dict[str, float]


class EvaluationList(BaseModel):
    evaluations: list[EvaluationSummary]


class RowScore(BaseModel):
    score: float
    reason: str


class EvaluationRow(BaseModel):
    id: str
    input: Any = None
    expected: Any = None
    answer: Any = None
    status: str
    run_id: str | None = None
    error: str | None = None
    duration_ms: float
    scores: dict[str, RowScore]


class Evaluation(EvaluationSummary):
    rows: list[EvaluationRow]


@router.get("/api/evaluations", response_model=EvaluationList, responses=errors())
async def list_evaluations() -> dict[str, Any]:
    """Every stored evaluation without its rows, newest first."""
    records = await asyncio.to_thread(store.load_all)
    return {"evaluations": [{k: v for k, v in r.items() if k != "rows"} for r in reversed(records)]}


@router.get("/api/evaluations/{evaluation_id}", response_model=Evaluation, responses=errors(404))
async def get_evaluation(evaluation_id: str) -> dict[str, Any]:
    """One evaluation with its rows: each answer and its scores."""
    records = await asyncio.to_thread(store.load_all)
    for record in records:
        if record["id"] == evaluation_id:
            return record
    raise ApiError(404, "not_found", f"no evaluation has the id {evaluation_id!r}")
