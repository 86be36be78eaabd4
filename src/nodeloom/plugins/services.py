"""What outlives a run: where it keeps files and sessions, and the credentials it may read.

`Services` is passed to structural builds (`BuildContext.services`) and to running nodes
(`FlowContext.services`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class CredentialSource(Protocol):
    """Named secrets (nodeloom.secrets.Vault): what `{{ $credentials.name }}` reads."""

    def get(self, name: str) -> str:
        """The value of `name`; raises LookupError if there is none."""
        ...


@dataclass(frozen=True, slots=True)
class Services:
    """Where a run keeps what outlives it. Passed to builds and executors."""

    data_dir: Path
    session_db_file: Path
    credentials: CredentialSource | None = None


__all__ = ["CredentialSource", "Services"]
