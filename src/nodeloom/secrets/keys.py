"""The vault's key: NODELOOM_SECRET_KEY (a Fernet key), else `<data dir>/secret.key`,
generated once with mode 0600."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from nodeloom.errors import NodeloomError

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

ENV_SECRET_KEY = "NODELOOM_SECRET_KEY"
KEY_FILE = "secret.key"
_GENERATE = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


class SecretKeyError(NodeloomError):
    """The vault's key is malformed, or is not the key the credentials were encrypted with."""

    code = "secret_key"


def generate_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


def fernet_from(key: str, source: str) -> Fernet:
    """A Fernet for `key`; `source` says where it came from, for the error message."""
    from cryptography.fernet import Fernet

    try:
        return Fernet(key.strip().encode())
    except (ValueError, TypeError):
        raise SecretKeyError(
            f"{source} is not a valid Fernet key (32 url-safe base64-encoded bytes); "
            f"generate one with: {_GENERATE}"
        ) from None


def load_key(folder: Path, *, create: bool) -> Fernet | None:
    """The vault's Fernet: from NODELOOM_SECRET_KEY, else the key file in `folder`
    (generated when `create`; None if it does not exist and not `create`)."""
    configured = os.environ.get(ENV_SECRET_KEY)
    if configured:
        return fernet_from(configured, ENV_SECRET_KEY)
    path = folder / KEY_FILE
    if not path.exists():
        if not create:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first: use theirs
            pass
        else:
            with os.fdopen(descriptor, "w") as file:
                file.write(generate_key() + "\n")
    return fernet_from(path.read_text(), f"the key file {path}")
