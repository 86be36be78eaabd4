"""The credential vault: named secrets encrypted at rest, referenced from graphs as
`{{ $credentials.name }}` and redacted from every event. See docs/credentials.md.

    from nodeloom.secrets import Vault
"""

from nodeloom.secrets.keys import ENV_SECRET_KEY, SecretKeyError, generate_key
from nodeloom.secrets.vault import (
    CredentialInfo,
    CredentialNameError,
    UnknownCredentialError,
    Vault,
)

__all__ = [
    "ENV_SECRET_KEY",
    "CredentialInfo",
    "CredentialNameError",
    "SecretKeyError",
    "UnknownCredentialError",
    "Vault",
    "generate_key",
]
