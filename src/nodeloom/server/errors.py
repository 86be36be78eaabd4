"""Every error the API returns has one shape, `{"error": {"code", "message", ...}}`, and a
status that says whose fault it is:

    400-499  the request: 401 unauthorized, 404 not_found, 405 method_not_allowed,
             409 run_state, 413 body_too_large, 422 invalid_request / invalid_graph /
             invalid_answer
    503      the store cannot be reached or is full (store_unavailable, store_full), or
             the queue (--queue) did not take a launch (queue_unavailable)
    500      a bug (internal_error): never for bad input
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from nodeloom.engine.human import AnswerError
from nodeloom.errors import GraphError, NodeloomError
from nodeloom.fleet.submit import QueueUnavailableError
from nodeloom.store import (
    NotFoundError,
    RunStateError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)

log = logging.getLogger("nodeloom.server")


class ApiError(Exception):
    """An error response: `status`, a stable `code`, a message that says what to do, and
    any further fields of the error object."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers: dict[str, str] | None = None


def error_response(
    http_status: int,
    code: str,
    message: str,
    *,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """`{"error": {"code", "message", **extra}}` with the status `http_status`."""
    body = {"error": {"code": code, "message": message, **extra}}
    return JSONResponse(body, status_code=http_status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(NodeloomError, _nodeloom_error)
    app.add_exception_handler(Exception, _unexpected)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, headers=exc.headers, **exc.extra)


_HTTP_CODES = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    if exc.status_code == 404 and exc.detail == "Not Found":
        message = f"no endpoint {request.url.path}; see /docs for the API"
    else:
        message = str(exc.detail)
    return error_response(exc.status_code, code, message, headers=dict(exc.headers or {}) or None)


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    issues = [
        {
            "code": str(error.get("type", "invalid")),
            "field": ".".join(str(part) for part in error.get("loc", ())),
            "node_id": None,
            "message": str(error.get("msg", "")),
        }
        for error in exc.errors()
    ]
    summary = "; ".join(f"{issue['field']}: {issue['message']}" for issue in issues)
    return error_response(422, "invalid_request", f"invalid request: {summary}", issues=issues)


async def _nodeloom_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, NodeloomError)
    if isinstance(exc, GraphError):
        issues = [issue.to_json() for issue in exc.issues]
        return error_response(422, exc.code, str(exc), issues=issues)
    if isinstance(exc, NotFoundError):
        return error_response(404, exc.code, str(exc))
    if isinstance(exc, RunStateError):
        return error_response(
            409, exc.code, str(exc), status=exc.status, required=list(exc.required)
        )
    if isinstance(exc, AnswerError):
        return error_response(422, exc.code, str(exc))
    if isinstance(exc, StoreUnavailableError | StoreFullError | QueueUnavailableError):
        return error_response(503, exc.code, str(exc))
    if isinstance(exc, StoreError):
        log.error("store error on %s %s: %s", request.method, request.url.path, exc)
        return error_response(500, exc.code, str(exc))
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", f"{exc.code}: {exc}")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "the server failed; see its log")
