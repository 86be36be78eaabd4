"""The cassette file: every HTTP exchange of a run, requests and responses, with secrets
removed (docs/testing.md#cassettes)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

FORMAT = 1
REDACTED = "REDACTED"
# Request headers never written: credentials. Response headers not written: what describes
# an encoding the stored body no longer has (bodies are stored decoded). Headers and query
# parameters named like secrets are kept with the value REDACTED.
_DROP_REQUEST = {"authorization", "proxy-authorization", "cookie", "api-key", "x-api-key"}
_DROP_RESPONSE = {"content-encoding", "content-length", "transfer-encoding"}
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|auth|signature|credential|session|cookie")
_SECRET_VARIABLE = re.compile(r"(?i)(_KEY|_TOKEN|_SECRET|_PASSWORD)$")


class CassetteError(Exception):
    """A cassette that cannot be read, or a request it has no recorded response for."""


def request_key(request: httpx.Request, body: bytes) -> str:
    """What a replayed request must match: method, URL (by its Host header: a guarded
    request goes to a checked IP address) with secret query values removed, and body (JSON
    with sorted keys)."""
    return f"{request.method} {public_url(request)} {_digest(_canonical(body))}"


def public_url(request: httpx.Request) -> str:
    url = urlsplit(str(request.url))
    host = request.headers.get("host") or url.netloc
    query = urlencode(
        [
            (name, REDACTED if _SECRET_NAME.search(name) else value)
            for name, value in parse_qsl(url.query, keep_blank_values=True)
        ]
    )
    return urlunsplit((url.scheme, host, url.path, query, ""))


def interaction(request: httpx.Request, body: bytes, response: httpx.Response) -> dict[str, Any]:
    secrets = _secret_values(request)
    return {
        "request": {
            "method": request.method,
            "url": public_url(request),
            "headers": _headers(request.headers, _DROP_REQUEST, secrets),
            "body": _scrub(_text(body), secrets),
            "key": request_key(request, body),
        },
        "response": {
            "status": response.status_code,
            "headers": _headers(response.headers, _DROP_RESPONSE, secrets),
            **_body(response.content, secrets),
        },
    }


def response_of(recorded: dict[str, Any], request: Any, lib: Any = httpx) -> Any:
    """The recorded response, as a `lib.Response` (httpx, or the MCP SDK's httpx2)."""
    data = recorded["response"]
    if "body_base64" in data:
        content = base64.b64decode(data["body_base64"])
    else:
        content = data.get("body", "").encode("utf-8")
    return lib.Response(
        data["status"], headers=data.get("headers") or {}, content=content, request=request
    )


def write(path: Path, interactions: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    document = {"format": FORMAT, "interactions": interactions}
    partial.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(partial, path)


def read(path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CassetteError(f"cannot read the cassette {path}: {exc}") from None
    except ValueError as exc:
        raise CassetteError(f"the cassette {path} is not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CassetteError(f"{path} is not a nodeloom cassette (format {FORMAT})")
    return list(document.get("interactions") or [])


def _secret_values(request: httpx.Request) -> list[str]:
    """Values to blank wherever they appear: the credentials the request sent, and the
    values of environment variables named like secrets (OPENAI_API_KEY, ...)."""
    values = []
    for name, value in request.headers.items():
        if name.lower() in _DROP_REQUEST or _SECRET_NAME.search(name):
            values.append(value.split(" ", 1)[-1] if " " in value else value)
    for name, value in os.environ.items():
        if _SECRET_VARIABLE.search(name) and value:
            values.append(value)
    for name, value in parse_qsl(urlsplit(str(request.url)).query):
        if _SECRET_NAME.search(name):
            values.append(value)
    return sorted({v for v in values if len(v) >= 6}, key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for value in secrets:
        text = text.replace(value, REDACTED)
    return text


def _headers(headers: httpx.Headers, drop: set[str], secrets: list[str]) -> dict[str, str]:
    kept = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in drop:
            continue
        kept[lower] = REDACTED if _SECRET_NAME.search(lower) else _scrub(value, secrets)
    return kept


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(body).decode("ascii")


def _body(content: bytes, secrets: list[str]) -> dict[str, str]:
    try:
        return {"body": _scrub(content.decode("utf-8"), secrets)}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(content).decode("ascii")}


def _canonical(body: bytes) -> bytes:
    try:
        return json.dumps(json.loads(body), sort_keys=True).encode()
    except ValueError:
        return body


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16] if body else "-"
