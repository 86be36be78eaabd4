"""The tool sources an operator offers for chat turns (Chat Start's `includeUserTools`).

A chat turn may name tools the person picked (`tools: ["math", "search"]`); each name maps
to a Toolset or MCP Server definition the operator wrote in a file: NODELOOM_USER_TOOLS,
else `<data dir>/user-tools.json`. A turn only ever names an entry: the command an MCP
server starts or the functions a Toolset imports come from this file, never from the
person chatting.

    {"tools": {
      "math": {"type": "toolset", "description": "Arithmetic",
               "parameters": {"toolsets": ["calculator"]}},
      "search": {"type": "mcp-server", "parameters": {"command": "python search.py"}}
    }}
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.errors import NodeloomError
from nodeloom.plugins.contract import UserTool

TOOL_SOURCE_TYPES = ("toolset", "mcp-server")
FILE_NAME = "user-tools.json"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class UserToolsError(NodeloomError):
    """The user tools file cannot be read, or an entry is malformed."""

    code = "invalid_user_tools"


def user_tools_file(data_dir: Path) -> Path:
    """Where the catalogue is read from: NODELOOM_USER_TOOLS, else the data dir's file."""
    configured = os.environ.get("NODELOOM_USER_TOOLS")
    return Path(configured) if configured else data_dir / FILE_NAME


def load_user_tools(path: Path) -> dict[str, UserTool]:
    """The catalogue in `path` (none if the file does not exist)."""
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserToolsError(f"user tools file {path} cannot be read: {exc}") from None
    entries = document.get("tools") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        raise UserToolsError(
            f'user tools file {path}: expected {{"tools": {{"<name>": {{"type": '
            '"toolset", "parameters": {...}}}}}'
        )
    return {name: _entry(path, name, entry) for name, entry in entries.items()}


def _entry(path: Path, name: str, entry: Any) -> UserTool:
    where = f"user tools file {path}, tool {name!r}"
    if not _NAME.match(name):
        raise UserToolsError(f"{where}: a name is 1-64 letters, digits, '_', '.' or '-'")
    if not isinstance(entry, dict):
        raise UserToolsError(f"{where}: expected an object with `type` and `parameters`")
    kind = entry.get("type")
    if kind not in TOOL_SOURCE_TYPES:
        raise UserToolsError(
            f"{where}: `type` is {kind!r}; it must be one of {', '.join(TOOL_SOURCE_TYPES)}"
        )
    parameters = entry.get("parameters", {})
    if not isinstance(parameters, dict):
        raise UserToolsError(f"{where}: `parameters` must be an object")
    unknown = set(entry) - {"type", "parameters", "description"}
    if unknown:
        raise UserToolsError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    return UserTool(name, kind, parameters, str(entry.get("description", "")))


def unknown_user_tools(names: list[str], offered: Mapping[str, UserTool]) -> str | None:
    """What to say about names the catalogue does not offer, or None if all are offered."""
    unknown = [name for name in names if name not in offered]
    if not unknown:
        return None
    valid = ", ".join(sorted(offered)) or "none (see docs/nodes/chat-start.md)"
    return f"no user tool named {unknown[0]!r}; the user tools file offers: {valid}"
