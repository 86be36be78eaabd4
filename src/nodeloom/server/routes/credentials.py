"""Credentials: write-only values in the vault (nodeloom.secrets), listed by name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from nodeloom.paths import data_dir
from nodeloom.secrets import CredentialNameError, Vault
from nodeloom.server.errors import ApiError
from nodeloom.server.routes.responses import errors

router = APIRouter(tags=["credentials"])


class CredentialValue(BaseModel):
    value: str = Field(min_length=1, description="The secret; never returned by the API.")


class CredentialModel(BaseModel):
    name: str
    created_at: str
    updated_at: str


class CredentialList(BaseModel):
    credentials: list[CredentialModel]


def vault() -> Vault:
    """The vault runs read (Services.credentials of nodeloom.paths.default_services)."""
    return Vault(data_dir())


@router.get("/api/credentials", response_model=CredentialList, responses=errors())
async def list_credentials() -> dict[str, Any]:
    """Every credential's name and times; values are never returned."""
    return {"credentials": [info.to_json() for info in vault().names()]}


@router.put("/api/credentials/{name}", response_model=CredentialModel, responses=errors())
async def put_credential(name: str, body: CredentialValue) -> dict[str, Any]:
    """Save a credential (new or replacing its value). Refer to it in a flow as
    `{{ $credentials.NAME }}`."""
    try:
        return vault().set(name, body.value).to_json()
    except CredentialNameError as exc:
        raise ApiError(422, exc.code, str(exc)) from None


@router.delete(
    "/api/credentials/{name}", status_code=204, response_class=Response, responses=errors(404)
)
async def delete_credential(name: str) -> Response:
    """Remove a credential. Runs that use it then fail, naming it."""
    if not vault().delete(name):
        raise ApiError(404, "not_found", f"there is no credential '{name}'")
    return Response(status_code=204)
