"""MCP Server: the tools of a Model Context Protocol server, for an Agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port
from nodeloom.tools.mcp import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT


def _is_set(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def check_mcp_server(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Static checks: one of command and url, a web URL, an env object, an allow list."""
    issues: list[tuple[str, str]] = []
    command, url = data.get("command"), data.get("url")
    if _is_set(command) and _is_set(url):
        issues.append(
            ("url", "set either `command` (a local server) or `url` (a remote one), not both")
        )
    elif not _is_set(command) and not _is_set(url):
        issues.append(
            (
                "command",
                "set `command` to start a local server (e.g. `python server.py`) or `url` "
                "to reach a remote one (e.g. https://mcp.example.com/mcp)",
            )
        )
    if _is_set(url) and not _is_expression(url):
        scheme = url.strip().split("://", 1)[0].lower() if "://" in url else ""
        if scheme not in ("http", "https"):
            issues.append(
                ("url", "url must start with http:// or https://, e.g. https://mcp.example.com/mcp")
            )
    env = data.get("env")
    if env is not None and not _is_expression(env):
        if not isinstance(env, dict):
            issues.append(("env", 'env must be an object of variables, e.g. {"API_KEY": "..."}'))
        elif env and _is_set(url) and not _is_set(command):
            issues.append(("env", "env applies to a `command`; a server at a `url` gets none"))
        else:
            wrong = [key for key, value in env.items() if not isinstance(value, str | int | float)]
            if wrong:
                issues.append(("env", f"env values must be text or numbers; {wrong[0]!r} is not"))
    allow = data.get("allow")
    if (
        allow is not None
        and not _is_expression(allow)
        and (not isinstance(allow, list) or not all(_is_set(name) for name in allow))
    ):
        issues.append(("allow", 'allow must be a list of tool names, e.g. ["search"]'))
    return issues


definition = NodeDefinition(
    id="mcp-server",
    name="MCP Server",
    category="tools",
    description="The tools of an MCP (Model Context Protocol) server, started from a "
    "command (stdio) or reached at a URL (streamable HTTP). Wire its `tools` socket into "
    "an Agent's `tools`.",
    icon="Plug",
    execution_mode="structural",
    inputs=(),
    outputs=(
        Port(
            "tools",
            socket="tools",
            label="Tools",
            description="Wire into an Agent's `tools` input.",
        ),
    ),
    parameters=(
        Parameter(
            "command",
            "string",
            "Command",
            description="A command line that starts a stdio MCP server, split like a shell "
            "would (no shell runs it). Set this or `url`.",
            placeholder="python server.py",
        ),
        Parameter(
            "url",
            "string",
            "URL",
            description="The streamable-HTTP endpoint of a remote MCP server. Set this or "
            "`command`.",
            placeholder="https://mcp.example.com/mcp",
        ),
        Parameter(
            "env",
            "json",
            "Environment",
            default={},
            description="Extra environment variables for the `command` server, e.g. "
            '{"API_KEY": "..."}. The server also gets PATH, HOME and a few basics, not '
            "nodeloom's whole environment. May hold credentials ({{ $credentials.NAME }}).",
            secret=True,
        ),
        Parameter(
            "allow",
            "json",
            "Allowed tools",
            default=None,
            description="Tool names to give the agent; empty: every tool the server offers. "
            "A name the server does not offer is an error.",
            placeholder='["search", "fetch"]',
        ),
        Parameter(
            "connect_timeout",
            "number",
            "Connect timeout (s)",
            default=DEFAULT_CONNECT_TIMEOUT,
            minimum=0.1,
            maximum=600,
            description="Seconds to start or reach the server and list its tools.",
        ),
        Parameter(
            "call_timeout",
            "number",
            "Tool call timeout (s)",
            default=DEFAULT_CALL_TIMEOUT,
            minimum=0.1,
            maximum=3600,
            description="Seconds one tool call may take; a slower call returns an error "
            "to the model.",
        ),
        Parameter(
            "allow_private_network",
            "boolean",
            "Allow private network",
            default=False,
            description="Let `url` point at loopback, private and link-local addresses "
            "(localhost, 10.x, 192.168.x). Off, they are refused. "
            "NODELOOM_ALLOW_PRIVATE_NETWORK=1 allows them for every node.",
        ),
    ),
    side_effects="external",
    check=check_mcp_server,
)
