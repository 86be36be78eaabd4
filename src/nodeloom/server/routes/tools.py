"""GET /api/tools: the user tools a chat turn may pick (the web UI's tool picker)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from nodeloom.paths import data_dir
from nodeloom.server.models import UserTools
from nodeloom.server.routes.responses import errors
from nodeloom.user_tools import load_user_tools, user_tools_file

router = APIRouter(tags=["chat"])


@router.get("/api/tools", response_model=UserTools, responses=errors())
async def get_user_tools() -> dict[str, Any]:
    """The names (and descriptions) of the toolsets and MCP servers the operator offers in
    the user tools file (NODELOOM_USER_TOOLS, else `<data dir>/user-tools.json`). What a
    tool runs stays on the server: a turn sends only names."""
    offered = load_user_tools(user_tools_file(data_dir()))
    return {
        "tools": [
            {"name": tool.name, "type": tool.type, "description": tool.description}
            for tool in offered.values()
        ]
    }
