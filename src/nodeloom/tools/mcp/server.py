"""The MCP Server node's parameters, checked: which server to reach, and how.

`read_server(data, context)` turns the node's parameters into a `Server` or raises a
NodeError (`invalid_parameter`) that names the parameter and the fix.
"""

from __future__ import annotations

import math
import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.net import display_url
from nodeloom.plugins.contract import BuildContext
from nodeloom.tools.mcp import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT


@dataclass(frozen=True)
class Server:
    """A checked MCP Server node: a command line (stdio) or a URL (streamable HTTP)."""

    command: str | None
    argv: tuple[str, ...]
    url: str | None
    env: dict[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    allow_private: bool = False

    @property
    def shown(self) -> str:
        """The server as messages show it: the command, or the URL without credentials."""
        if self.url is not None:
            return display_url(self.url)
        return self.command or ""

    @property
    def source(self) -> str:
        return f"mcp: {self.shown}"


def invalid(message: str, parameter: str) -> NodeError:
    return NodeError(
        message, code="invalid_parameter", retryable=False, details={"field": parameter}
    )


def read_server(data: dict[str, Any], context: BuildContext) -> Server:
    for parameter in ("command", "url", "env", "allow"):
        if parameter in context.deferred:
            raise invalid(
                f"`{parameter}` depends on the flow, but tools are built before the flow "
                "runs: use a plain value, or an expression of $vars and $trigger only",
                parameter,
            )
    command = _text(data.get("command"), "command")
    url = _text(data.get("url"), "url")
    if command and url:
        raise invalid(
            "set either `command` (a local server) or `url` (a remote one), not both", "url"
        )
    if not command and not url:
        raise invalid(
            "set `command` to start a local MCP server (e.g. `python server.py`) or `url` to "
            "reach a remote one (e.g. https://mcp.example.com/mcp)",
            "command",
        )
    argv: tuple[str, ...] = ()
    if command:
        try:
            argv = tuple(shlex.split(command, posix=os.name != "nt"))
        except ValueError as exc:
            raise invalid(f"`command` does not parse as a command line: {exc}", "command") from None
    env = _env(data.get("env"))
    if env and url:
        raise invalid("`env` applies to a `command`; a server at a `url` gets none", "env")
    return Server(
        command=command,
        argv=argv,
        url=url,
        env=env,
        allow=_allow(data.get("allow")),
        connect_timeout=_seconds(data, "connect_timeout", DEFAULT_CONNECT_TIMEOUT),
        call_timeout=_seconds(data, "call_timeout", DEFAULT_CALL_TIMEOUT),
        allow_private=bool(data.get("allow_private_network")),
    )


def _text(value: Any, parameter: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"`{parameter}` must be text, not {type(value).__name__}", parameter)
    return value.strip() or None


def _env(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(
            f'`env` must be an object such as {{"API_KEY": "..."}}, not {type(value).__name__}',
            "env",
        )
    env: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            item = "true" if item else "false"
        if not isinstance(item, str | int | float):
            raise invalid(
                f"`env` values must be text or numbers; {key!r} is {type(item).__name__}", "env"
            )
        env[str(key)] = str(item)
    return env


def _allow(value: Any) -> tuple[str, ...] | None:
    if value is None or value == []:
        return None
    if not isinstance(value, list) or not all(
        isinstance(name, str) and name.strip() for name in value
    ):
        raise invalid('`allow` must be a list of tool names such as ["search"]', "allow")
    return tuple(dict.fromkeys(name.strip() for name in value))


def _seconds(data: dict[str, Any], parameter: str, default: float) -> float:
    value = data.get(parameter)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(f"`{parameter}` must be a number of seconds", parameter)
    if not math.isfinite(value) or value <= 0:
        raise invalid(f"`{parameter}` must be more than 0 seconds, not {value}", parameter)
    return float(value)


__all__ = ["Server", "invalid", "read_server"]
