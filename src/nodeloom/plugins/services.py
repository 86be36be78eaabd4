"""What outlives a run: where it keeps files and sessions, and the credentials it may read.

`Services` is passed to structural builds (`BuildContext.services`) and to running nodes
(`FlowContext.services`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from nodeloom.plugins.subflows import FlowRunner


class CredentialSource(Protocol):
    """Named secrets (nodeloom.secrets.Vault): what `{{ $credentials.name }}` reads."""

    def get(self, name: str) -> str:
        """The value of `name`; raises LookupError if there is none."""
        ...


@dataclass(frozen=True, slots=True)
class UserTool:
    """A tool source the operator offers for chat turns (docs/nodes/chat-start.md): a
    name for a Toolset or MCP Server node's parameters. A turn names it; it never says
    what the tool source is."""

    name: str
    type: str  # "toolset" or "mcp-server"
    parameters: Mapping[str, Any]
    description: str = ""


@dataclass(frozen=True, slots=True)
class Services:
    """Where a run keeps what outlives it. Passed to builds and executors.
    `user_tools`: the tool sources a chat turn may pick (Chat Start's `includeUserTools`).
    `flows`: runs saved flows as child runs (nodeloom.plugins.subflows); a RunService
    gives it to the runs it records, an unrecorded run has none."""

    data_dir: Path
    session_db_file: Path
    credentials: CredentialSource | None = None
    user_tools: Mapping[str, UserTool] = field(default_factory=dict)
    flows: FlowRunner | None = None


__all__ = ["CredentialSource", "Services", "UserTool"]
