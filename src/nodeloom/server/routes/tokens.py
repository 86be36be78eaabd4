"""API tokens over HTTP (the web UI's settings), as `nodeloom token create|list|revoke`:
a new token is shown once, in the answer that creates it; only its digest is kept."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from nodeloom.server.errors import ApiError
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State
from nodeloom.server.tokens import TokenInfo

router = APIRouter(tags=["tokens"])


class TokenRequest(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="what the token is for")


class TokenModel(BaseModel):
    id: str
    name: str
    created_at: str


class NewToken(TokenModel):
    token: str = Field(description="the token itself: shown only in this answer")


class TokenList(BaseModel):
    tokens: list[TokenModel]


@router.get("/api/tokens", response_model=TokenList, responses=errors())
async def list_tokens(state: State) -> dict[str, Any]:
    """Every token's id, name and creation time; never the tokens."""
    return {"tokens": [_json(info) for info in state.tokens.list()]}


@router.post("/api/tokens", status_code=201, response_model=NewToken, responses=errors())
async def create_token(body: TokenRequest, state: State) -> dict[str, Any]:
    """A new token. The answer is the only time it is shown: keep it."""
    info, token = state.tokens.create(body.name.strip() or body.name)
    return {**_json(info), "token": token}


@router.delete(
    "/api/tokens/{token_id}", status_code=204, response_class=Response, responses=errors(404)
)
async def revoke_token(token_id: str, state: State) -> Response:
    """Revoke a token: requests with it are refused from now on (this one's included)."""
    try:
        state.tokens.revoke(token_id)
    except KeyError:
        raise ApiError(404, "not_found", f"there is no token with the id '{token_id}'") from None
    return Response(status_code=204)


def _json(info: TokenInfo) -> dict[str, Any]:
    return {"id": info.id, "name": info.name, "created_at": info.created_at}
