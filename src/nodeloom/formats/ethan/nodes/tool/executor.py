"""Ethan Tool: render the inputs, call the tool, check its `error`, map and route.

What a node keeps between its calls (the imported function, an MCP server connection)
lives with its phase-1 build (`FlowContext.build_context`), which the engine closes with
the flow; without one (an executor called alone) every call starts afresh.
"""

from __future__ import annotations

import copy
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.ethan import frames, runtime, templates
from nodeloom.formats.ethan.nodes.tool import http_call, mcp_call, python_call
from nodeloom.formats.ethan.nodes.tool.results import normalize
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class EthanToolExecutor:
    node_type = "ethan-tool"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        frame = frames.find(context)
        try:
            runtime.on_time(frame, spec)
            tool = spec["tool"]
            rendered = templates.render_value(spec.get("inputs") or {}, runtime.scope(frame))
            result = await runtime.bounded(
                frame, _call(tool, copy.deepcopy(rendered), context), runtime.describe(spec)
            )
            error = result.get("error")
            if error not in (None, False, "", {}):
                status = result.get("status")
                raise NodeError(
                    f"the tool returned an error: {_shown(error)}",
                    code="tool_error",
                    retryable=http_call.retryable(status)
                    if tool["kind"] == "http" and isinstance(status, int)
                    else True,
                    details={"result": result},
                )
            return runtime.finish(spec, frame, context, result)
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


async def _call(
    tool: dict[str, Any], rendered: dict[str, Any], context: FlowContext
) -> dict[str, Any]:
    kind, config = tool["kind"], tool.get("config") or {}
    stash = _stash(context)
    if kind == "python":
        function = stash.get("function") if stash is not None else None
        if function is None:
            function = python_call.resolve(tool["impl"])
            if stash is not None:
                stash["function"] = function
        arguments = {**copy.deepcopy(config), **rendered}
        return normalize(await python_call.call(function, arguments))
    if kind == "http":
        fields = {k: v for k, v in config.items() if k != "allow_private_network"}
        return await http_call.request(
            {**copy.deepcopy(fields), **rendered},
            allow_private=bool(config.get("allow_private_network")),
        )
    if kind == "mcp":
        server = mcp_call.server_of(config)
        arguments = {**copy.deepcopy(config.get("arguments") or {}), **rendered}
        build = getattr(context, "build_context", None)
        if stash is None or build is None:
            connection, _ = await mcp_call.connect(server)
            try:
                return await mcp_call.call(connection, server, config["tool"], arguments)
            finally:
                await connection.close()
        connections = stash.setdefault("mcp", mcp_call.Connections())
        connection = await connections.get(server, build.on_close)
        return await mcp_call.call(connection, server, config["tool"], arguments)
    raise NodeError(f"unknown tool kind {kind!r}", code="executor_contract", retryable=False)


def _stash(context: FlowContext) -> dict[str, Any] | None:
    """The node's keepsakes, on its build context (a plain dataclass of the contract)."""
    build = getattr(context, "build_context", None)
    if build is None:
        return None
    return vars(build).setdefault("_ethan_tool", {})


def _shown(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type")
        return f"{error['message']}" + (f" ({kind})" if kind else "")
    return str(error)


executor = EthanToolExecutor()
