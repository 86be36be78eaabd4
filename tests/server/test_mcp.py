"""Saved flows as MCP tools at /mcp of a real `nodeloom serve`, reached with the official
`mcp` client over streamable HTTP: the flows are listed as tools, a call runs one (a
recorded run) with progress notifications, and the endpoint wants the bearer token."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from nodeloom.testing.builders import chain, node

from .conftest import Server
from .flows import shout
from .test_runs import save


def connect(server: Server, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = create_mcp_http_client(headers=headers)
    return Client(streamable_http_client(f"{server.url}/mcp", http_client=client))


async def list_and_call(server: Server) -> tuple[types.ListToolsResult, Any, list[str]]:
    progress: list[str] = []

    async def seen(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with connect(server, server.token) as client:
        tools = await client.list_tools()
        called = await client.call_tool(
            "shout_over_mcp", {"message": "hi mcp"}, progress_callback=seen
        )
        failed = await client.call_tool("breaks_over_mcp", {"message": "x"})
    return tools, (called, failed), progress


def test_the_published_flows_are_mcp_tools_and_a_call_runs_one(server: Server, api: httpx.Client):
    flow_id = save(api, {**shout(), "description": "Shouts."}, name="Shout over MCP")
    save(
        api,
        chain(node("start", "chat-start"), node("boom", "fail", message="no")),
        "Breaks over MCP",
    )

    tools, (called, failed), progress = asyncio.run(list_and_call(server))

    offered = {tool.name: tool for tool in tools.tools}
    assert {"shout_over_mcp", "breaks_over_mcp"} <= set(offered)
    assert offered["shout_over_mcp"].description == "Shouts."
    assert offered["shout_over_mcp"].input_schema["required"] == ["message"]

    assert called.is_error is False
    assert [block.text for block in called.content] == ["HI MCP"]
    run_id = called.structured_content["run_id"]
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "completed" and run["flow_id"] == flow_id
    assert run["trigger"] == {"message": "hi mcp"}
    assert "Shout: completed" in progress

    assert failed.is_error is True
    assert "no" in failed.content[0].text and failed.structured_content["status"] == "failed"


async def refused(server: Server, token: str | None) -> int:
    async with httpx2.AsyncClient() as client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = await client.post(f"{server.url}/mcp", json={}, headers=headers)
        return response.status_code


def test_the_mcp_endpoint_refuses_a_caller_without_a_valid_token(server: Server):
    assert asyncio.run(refused(server, None)) == 401
    assert asyncio.run(refused(server, "not-a-token")) == 401
