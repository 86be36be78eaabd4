"""`nodeloom mcp serve FLOW...`: the chosen saved flows as MCP tools over stdio, reached
with the official `mcp` client, which starts the command as a real subprocess."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

from .conftest import cli_environment, nodeloom_executable

pytestmark = pytest.mark.slow  # each test starts a `nodeloom` process (about 3 s here)

SHOUT = chain(
    node("start", "chat-start"),
    node("shout", "json-transform", name="Shout", expression='{"text": $uppercase(message)}'),
)


async def saved_flows(url: str) -> None:
    async with await Store.open(url) as store:
        await store.save_flow("Shout", SHOUT)
        await store.save_flow("Not chosen", SHOUT)


async def session(env: dict[str, str]) -> tuple[Any, Any, list[str]]:
    progress: list[str] = []

    async def seen(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    parameters = StdioServerParameters(
        command=nodeloom_executable(), args=["mcp", "serve", "Shout"], env=env
    )
    async with Client(parameters) as client:
        tools = await client.list_tools()
        called = await client.call_tool("shout", {"message": "over stdio"}, progress_callback=seen)
    return tools, called, progress


def test_mcp_serve_offers_the_chosen_flows_over_stdio_and_runs_a_call(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'nodeloom.db'}"
    asyncio.run(saved_flows(url))
    env = cli_environment(NODELOOM_DATABASE_URL=url, NODELOOM_DATA_DIR=str(tmp_path / "data"))

    tools, called, progress = asyncio.run(session(env))

    assert [tool.name for tool in tools.tools] == ["shout"]
    assert called.is_error is False
    assert [block.text for block in called.content] == ["OVER STDIO"]
    assert "Shout: completed" in progress

    async def recorded() -> Any:
        async with await Store.open(url) as store:
            return await store.get_run(called.structured_content["run_id"])

    run = asyncio.run(recorded())
    assert run.status == "completed" and run.trigger == {"message": "over stdio"}


def test_mcp_serve_exits_2_naming_an_unknown_flow(tmp_path: Path, nodeloom: Callable[..., Any]):
    url = f"sqlite:///{tmp_path / 'nodeloom.db'}"
    asyncio.run(saved_flows(url))
    done = nodeloom(
        "mcp",
        "serve",
        "Nope",
        env={"NODELOOM_DATABASE_URL": url, "NODELOOM_DATA_DIR": str(tmp_path)},
    )
    assert done.returncode == 2
    assert "'Nope'" in done.stderr and "'Shout'" in done.stderr
