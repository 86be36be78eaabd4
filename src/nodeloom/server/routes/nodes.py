"""GET /api/nodes: the node catalogue (what `nodeloom nodes --json` prints)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from nodeloom.server.models import Catalogue
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State

router = APIRouter(tags=["nodes"])


@router.get(
    "/api/nodes",
    response_model=Catalogue,
    response_model_exclude_unset=True,  # exactly the CLI's JSON, no added nulls
    responses=errors(),
)
async def get_nodes(state: State) -> dict[str, Any]:
    """Every node type the server can run, with its ports and parameters, the socket
    types, the coercions between them, and plugins that failed to load."""
    return state.registry.to_json()
