"""The MCP server of published flows (mcp 2.3.0's low-level `Server`): `tools/list` lists
the flows, `tools/call` runs one (a recorded run) and answers with its result; while it
runs, each node that completes, fails or waits is a progress notification (when the
client asked for progress). The transport is the caller's: streamable HTTP in
`nodeloom serve` (nodeloom.server.mcp_endpoint), stdio in `nodeloom mcp serve`."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from nodeloom import __version__
from nodeloom.plugins.contract import Event
from nodeloom.publishing.flows import Outcome, PublishedFlows


def mcp_server(flows: PublishedFlows) -> Server[Any]:
    """An MCP server whose tools are `flows`."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        offered = await flows.tools()
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    description=saved.description or f"Runs the flow '{saved.name}'.",
                    input_schema=dict(saved.input_schema),
                )
                for name, saved in offered.items()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        offered = await flows.tools()
        saved = offered.get(params.name)
        if saved is None:
            known = ", ".join(sorted(offered)) or "none"
            return _answer(f"no tool is named {params.name!r}; the tools are: {known}", error=True)
        outcome: Outcome | None = None
        done = 0
        async for item in flows.call(saved, params.arguments or {}):
            if isinstance(item, Event):
                done += 1
                message = f"{item.node_name}: {item.event_type}"
                await ctx.session.report_progress(done, None, message)
            else:
                outcome = item
        assert outcome is not None
        structured = {"run_id": outcome.run_id, "status": outcome.status, "result": outcome.result}
        if outcome.ok:
            return _answer(_text(outcome.result), structured=structured)
        reason = (outcome.error or {}).get("message", "no error given")
        return _answer(
            f"the flow '{saved.name}' ended {outcome.status}: {reason}",
            error=True,
            structured={**structured, "error": outcome.error},
        )

    return Server(
        "nodeloom",
        version=__version__,
        instructions="Each tool runs a saved nodeloom flow; its arguments are the flow's trigger.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _answer(
    text: str, *, error: bool = False, structured: dict[str, Any] | None = None
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured, is_error=error
    )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "response", "message"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False, default=str)
