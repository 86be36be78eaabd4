"""`Vault`: credentials by name, encrypted with Fernet in `<data dir>/credentials.json`.

The file maps each name to its ciphertext and times; it is rewritten whole (temporary
file, then rename) with mode 0600. Every call reads the file, so the server and the CLI
see each other's changes. Values are decrypted only by `get`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nodeloom.errors import NodeloomError
from nodeloom.secrets.keys import ENV_SECRET_KEY, KEY_FILE, SecretKeyError, fernet_from, load_key

STORE_FILE = "credentials.json"
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class CredentialNameError(NodeloomError, ValueError):
    code = "credential_name"


class UnknownCredentialError(NodeloomError, LookupError):
    code = "unknown_credential"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"there is no credential '{name}'; add it with `nodeloom credentials set {name}` "
            f"or PUT /api/credentials/{name}"
        )
        self.name = name


@dataclass(frozen=True, slots=True)
class CredentialInfo:
    """What may be shown of a credential: never its value."""

    name: str
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "created_at": self.created_at, "updated_at": self.updated_at}


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise CredentialNameError(
            f"invalid credential name {name!r}: use letters, digits and _ (not first), at "
            "most 64 characters, so that {{ $credentials.NAME }} can refer to it"
        )
    return name


class Vault:
    def __init__(self, folder: Path, *, key: str | None = None) -> None:
        self.folder = Path(folder)
        self.path = self.folder / STORE_FILE
        self._key = key

    # -- reading ----------------------------------------------------------------------------

    def names(self) -> list[CredentialInfo]:
        """Every credential (name and times), sorted by name."""
        entries = self._read()
        return [_info(name, entries[name]) for name in sorted(entries)]

    def get(self, name: str) -> str:
        """The value of `name`. Raises UnknownCredentialError, or SecretKeyError if the key
        is not the one it was encrypted with."""
        entry = self._read().get(name)
        if entry is None:
            raise UnknownCredentialError(name)
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet(create=False).decrypt(entry["value"].encode()).decode()
        except (InvalidToken, KeyError, AttributeError):
            raise SecretKeyError(
                f"credential '{name}' cannot be decrypted: the key ({self._key_source()}) is "
                f"not the one it was saved with. Set {ENV_SECRET_KEY} to the original key, "
                "or save the credential again"
            ) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._read()

    # -- writing ----------------------------------------------------------------------------

    def set(self, name: str, value: str) -> CredentialInfo:
        """Save `name` (new, or replacing its value)."""
        check_name(name)
        if not isinstance(value, str) or not value:
            raise CredentialNameError(f"credential '{name}' needs a non-empty string value")
        entries = self._read()
        now = datetime.now(UTC).isoformat()
        ciphertext = self._fernet(create=True).encrypt(value.encode()).decode()
        created = entries.get(name, {}).get("created_at", now)
        entries[name] = {"value": ciphertext, "created_at": created, "updated_at": now}
        self._write(entries)
        return _info(name, entries[name])

    def delete(self, name: str) -> bool:
        """Remove `name`; False if there was no such credential."""
        entries = self._read()
        if entries.pop(name, None) is None:
            return False
        self._write(entries)
        return True

    def rotate(self, new_key: str) -> int:
        """Re-encrypt every credential with `new_key` (a Fernet key); returns how many.
        Afterwards set NODELOOM_SECRET_KEY (or the key file) to `new_key`."""
        target = fernet_from(new_key, "the new key")
        entries = self._read()
        for name, entry in entries.items():
            entry["value"] = target.encrypt(self.get(name).encode()).decode()
        self._write(entries)
        return len(entries)

    # -- the file ---------------------------------------------------------------------------

    def _fernet(self, *, create: bool) -> Any:
        if self._key is not None:
            return fernet_from(self._key, "the vault's key")
        fernet = load_key(self.folder, create=create)
        if fernet is None:
            raise SecretKeyError(
                f"there is no key to decrypt credentials: set {ENV_SECRET_KEY}, or restore "
                f"{self.folder / KEY_FILE}"
            )
        return fernet

    def _key_source(self) -> str:
        if self._key is not None:
            return "the vault's key"
        if os.environ.get(ENV_SECRET_KEY):
            return ENV_SECRET_KEY
        return f"{self.folder / KEY_FILE}"

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text)
            entries = data["credentials"]
        except (ValueError, KeyError, TypeError):
            raise NodeloomError(f"{self.path} is not a credentials file") from None
        if not isinstance(entries, dict):
            raise NodeloomError(f"{self.path} is not a credentials file")
        return entries

    def _write(self, entries: dict[str, dict[str, str]]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{STORE_FILE}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump({"version": 1, "credentials": entries}, file, indent=1, sort_keys=True)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)


def _info(name: str, entry: dict[str, str]) -> CredentialInfo:
    return CredentialInfo(name, entry.get("created_at", ""), entry.get("updated_at", ""))
