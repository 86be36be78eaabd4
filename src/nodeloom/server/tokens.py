"""API tokens, kept hashed: `nodeloom token create/list/revoke` write them, the server
checks `Authorization: Bearer <token>` against them.

A token is shown once, when it is created; only its sha256 is stored. The store is a JSON
file (`<data dir>/tokens.json`, mode 0600, replaced atomically) read again whenever it
changes, so a token created or revoked while the server runs takes effect at once. The
`TokenStore` class is the seam: it can move into the run store's database later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PREFIX = "nl_"


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token as listed: never the token itself."""

    id: str
    name: str
    created_at: str  # ISO 8601, UTC


@dataclass(frozen=True, slots=True)
class _Entry:
    id: str
    name: str
    created_at: str
    sha256: str


class TokenStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: list[_Entry] = []
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file last read

    # -- managing -------------------------------------------------------------------------

    def create(self, name: str) -> tuple[TokenInfo, str]:
        """A new token named `name`: its info and the token (shown once, never stored)."""
        token = PREFIX + secrets.token_urlsafe(32)
        entry = _Entry(
            id=secrets.token_hex(6),
            name=name,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            sha256=_digest(token),
        )
        self._write([*self._read(), entry])
        return _info(entry), token

    def list(self) -> list[TokenInfo]:
        return [_info(entry) for entry in self._read()]

    def revoke(self, token_id: str) -> TokenInfo:
        """Remove a token. KeyError (naming the known ids) if there is none with that id."""
        entries = self._read()
        kept = [entry for entry in entries if entry.id != token_id]
        if len(kept) == len(entries):
            known = ", ".join(entry.id for entry in entries) or "none"
            raise KeyError(f"no token with id {token_id!r}; tokens: {known}")
        self._write(kept)
        (gone,) = [entry for entry in entries if entry.id == token_id]
        return _info(gone)

    # -- checking -------------------------------------------------------------------------

    def verify(self, token: str) -> TokenInfo | None:
        """The token's info if it is valid. Compares sha256 digests in constant time, with
        every stored token (no early exit), so timing tells nothing about which matched."""
        presented = _digest(token).encode()
        found: _Entry | None = None
        for entry in self._current():
            if hmac.compare_digest(presented, entry.sha256.encode()):
                found = entry
        return _info(found) if found is not None else None

    # -- the file -------------------------------------------------------------------------

    def _current(self) -> list[_Entry]:
        """The entries, read again only when the file changed."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._entries, self._seen = [], None
            return []
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            self._entries, self._seen = self._read(), seen
        return self._entries

    def _read(self) -> list[_Entry]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        try:
            data: Any = json.loads(text)
            return [_Entry(**item) for item in data["tokens"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{self.path} is not a nodeloom token file ({exc}); move it away and "
                "create the tokens again with `nodeloom token create NAME`"
            ) from None

    def _write(self, entries: list[_Entry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"tokens": [asdict(entry) for entry in entries]}, indent=2)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(body + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _info(entry: _Entry) -> TokenInfo:
    return TokenInfo(entry.id, entry.name, entry.created_at)
