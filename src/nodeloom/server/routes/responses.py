"""The error responses routes declare, so /openapi.json documents them."""

from __future__ import annotations

from typing import Any

from nodeloom.server.models import LARGEST_INT, ErrorResponse

__all__ = ["LARGEST_INT", "errors"]


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    described = {
        401: "no valid bearer token",
        404: "no such flow or run",
        409: "the run's state does not allow this",
        413: "the request body is too large",
        422: "invalid request or graph (`issues` lists every problem)",
    }
    return {
        status: {"model": ErrorResponse, "description": described[status]}
        for status in (401, 413, 422, *statuses)
    }
