"""What outlives a run: where it keeps files and sessions, and the credentials it may read.

`Services` is passed to structural builds (`BuildContext.services`) and to running nodes
(`FlowContext.services`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from nodeloom.plugins.subflows import FlowRunner


class CredentialSource(Protocol):
    """Named secrets (nodeloom.secrets.Vault): what `{{ $credentials.name }}` reads."""

    def get(self, name: str) -> str:
        """The value of `name`; raises LookupError if there is none."""
        ...


class BinaryWriter(Protocol):
    """Bytes on their way into the run store's blob area (synchronous: use a thread)."""

    size: int

    def write(self, data: bytes) -> None: ...

    def finish(self) -> dict[str, Any]:
        """Store the bytes under their digest; the blob reference (`{"$ref": "blob:..."`,
        mime, size, name, sig})."""
        ...

    def abort(self) -> None: ...


class BinaryStore(Protocol):
    """The run store's blob area for binary content (nodeloom.store.BinaryBlobs): bytes
    kept once by digest, referenced by signed `blob:` references. Synchronous file I/O:
    call it in a thread. See docs/files.md."""

    def writer(self, name: str, mime: str | None = None) -> BinaryWriter: ...

    def is_ref(self, value: Any) -> bool:
        """Whether `value` has the shape of a blob reference (signed or not)."""
        ...

    def open(self, value: Any) -> BinaryIO:
        """The bytes of a reference the store made; LookupError for a forged one."""
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
    `blobs`: the run store's binary content, for runs recorded in a store.
    `flows`: runs saved flows as child runs (nodeloom.plugins.subflows); a RunService
    gives it to the runs it records, an unrecorded run has none."""

    data_dir: Path
    session_db_file: Path
    credentials: CredentialSource | None = None
    user_tools: Mapping[str, UserTool] = field(default_factory=dict)
    blobs: BinaryStore | None = None  # a recorded run's store (None: a run without a store)
    flows: FlowRunner | None = None


__all__ = ["BinaryStore", "BinaryWriter", "CredentialSource", "Services", "UserTool"]
