"""Signed decision links: what Send and Wait emails, and what the server checks.

A link carries its own payload (run, node, the wait it belongs to, the decision, the
expiry), signed with HMAC-SHA256 under a key derived from the vault's key
(NODELOOM_SECRET_KEY or `<data dir>/secret.key`), so any process that reads the same
vault can check it and nobody without the key can make one. It is single-use because the
server accepts it only while that very wait is open (see nodeloom.server.routes.decisions).

    token = sign_decision(folder, run_id="r1", node_id="ask", wait="w1",
                          decision="approve", expires=time.time() + 3600)
    link = read_decision(folder, token)      # LinkError if forged or malformed
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path

from nodeloom.errors import NodeloomError
from nodeloom.secrets.keys import ENV_SECRET_KEY, KEY_FILE, load_key

DECISIONS = ("approve", "reject")
_LABEL = b"nodeloom decision links v1\0"


class LinkError(NodeloomError):
    """A decision link that is malformed or not signed with this vault's key."""

    code = "invalid_link"


@dataclass(frozen=True, slots=True)
class DecisionLink:
    run_id: str
    node_id: str
    wait: str
    decision: str
    expires: float

    def expired(self, now: float) -> bool:
        return now >= self.expires


def sign_decision(
    folder: Path, *, run_id: str, node_id: str, wait: str, decision: str, expires: float
) -> str:
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {DECISIONS}")
    payload = json.dumps(
        {"r": run_id, "n": node_id, "w": wait, "d": decision, "e": int(expires)},
        separators=(",", ":"),
    ).encode()
    body = _b64(payload)
    return f"{body}.{_b64(_mac(folder, body))}"


def read_decision(folder: Path, token: str) -> DecisionLink:
    """The link's payload, once its signature is checked (in constant time)."""
    body, dot, signature = token.partition(".")
    if not dot or not body or not signature:
        raise LinkError("this is not a decision link")
    try:
        given = _unb64(signature)
    except ValueError:
        raise LinkError("this is not a decision link") from None
    if not hmac.compare_digest(given, _mac(folder, body)):
        raise LinkError("this decision link was not made by this server, or was altered")
    try:
        data = json.loads(_unb64(body))
        link = DecisionLink(
            str(data["r"]), str(data["n"]), str(data["w"]), str(data["d"]), float(data["e"])
        )
    except (ValueError, KeyError, TypeError):
        raise LinkError("this decision link is malformed") from None
    if link.decision not in DECISIONS:
        raise LinkError("this decision link is malformed")
    return link


def _mac(folder: Path, body: str) -> bytes:
    return hmac.new(_key(folder), body.encode(), hashlib.sha256).digest()


def _key(folder: Path) -> bytes:
    load_key(folder, create=True)  # makes the key file the first time, checks the key
    secret = os.environ.get(ENV_SECRET_KEY) or (folder / KEY_FILE).read_text()
    return hashlib.sha256(_LABEL + secret.strip().encode()).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        raise ValueError("not base64") from None
