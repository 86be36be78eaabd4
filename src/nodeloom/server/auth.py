"""Bearer-token authentication for /api and /v1 routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from nodeloom.server.errors import ApiError
from nodeloom.server.runtime import State
from nodeloom.server.tokens import TokenInfo

_bearer = HTTPBearer(auto_error=False, description="a token from `nodeloom token create`")


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    state: State,
) -> TokenInfo | None:
    """The caller's token; 401 without a valid one. With `--dev`, anyone (None)."""
    if state.config.dev:
        return None
    if credentials is None:
        raise _unauthorized("missing `Authorization: Bearer <token>` header")
    token = state.tokens.verify(credentials.credentials)
    if token is None:
        raise _unauthorized("invalid or revoked token")
    request.state.token = token
    return token


def _unauthorized(why: str) -> ApiError:
    error = ApiError(
        401,
        "unauthorized",
        f"{why}; create a token with `nodeloom token create NAME` and send it as "
        "`Authorization: Bearer <token>`",
    )
    error.headers = {"WWW-Authenticate": "Bearer"}
    return error
