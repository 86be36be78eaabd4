"""What `--dev` (no authentication) accepts, as ASGI middleware: a defence against DNS
rebinding and cross-site requests from a page the developer has open.

- The `Host` header must name a loopback address, `localhost`, or a configured public host
  (`--public-host`): a rebound name (`evil.example` now resolving to 127.0.0.1) is
  refused with `403 host_not_allowed`.
- A request that changes state (any method but GET, HEAD, OPTIONS) and every WebSocket
  handshake must come from the server's own origin when it says where it comes from: an
  `Origin` header naming another origin (or `null`) is refused with
  `403 cross_origin_refused`. Requests without `Origin` (curl, the CLI, SDKs) pass.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from nodeloom.server.config import is_loopback

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class DevGuard:
    def __init__(self, app: ASGIApp, public_hosts: tuple[str, ...] = ()) -> None:
        self.app = app
        self.public_hosts = frozenset(host.lower() for host in public_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value for name, value in scope["headers"]}
        host = headers.get("host", b"").decode("latin-1")
        refusal = self._host_refusal(host)
        if refusal is None:
            origin = headers.get("origin")
            checks_origin = scope["type"] == "websocket" or scope["method"] not in SAFE_METHODS
            if checks_origin and origin is not None:
                refusal = _origin_refusal(origin.decode("latin-1"), host, scope)
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await receive()  # websocket.connect; closing before accept answers 403
            await send({"type": "websocket.close", "code": 1008, "reason": refusal[1][:100]})
        else:
            await _refuse(send, *refusal)

    def _host_refusal(self, host: str) -> tuple[str, str] | None:
        name = _split_host(host)[0]
        if name and (is_loopback(name) or name in self.public_hosts):
            return None
        return (
            "host_not_allowed",
            f"--dev (no authentication) only answers requests for a loopback address, "
            f"localhost or a --public-host, not Host {host!r}: this refuses DNS rebinding. "
            "Open the server as http://127.0.0.1:PORT, or start it with --public-host NAME.",
        )


def _origin_refusal(origin: str, host: str, scope: Scope) -> tuple[str, str] | None:
    parts = urlsplit(origin)
    scheme = parts.scheme or "http"
    try:
        origin_port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        origin_port = None
    name, port = _split_host(host)
    request_scheme = scope.get("scheme", "http")
    same_port = origin_port == (port or _DEFAULT_PORTS.get(request_scheme))
    if parts.hostname is not None and parts.hostname.lower() == name and same_port:
        return None
    return (
        "cross_origin_refused",
        f"--dev (no authentication) refuses a {scope.get('method', 'WebSocket')} request "
        f"from the page {origin!r}, another origin than the server's ({host}): a site "
        "open in your browser must not drive your local server. Send it from the nodeloom "
        "UI itself, or without an Origin header (curl, the SDK).",
    )


def _split_host(host: str) -> tuple[str, int | None]:
    """("name", port) of a Host header: `127.0.0.1:8000`, `[::1]:8000`, `localhost`."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port_text = rest.removeprefix(":")
    else:
        name, _, port_text = host.partition(":")
    try:
        port = int(port_text) if port_text else None
    except ValueError:
        return "", None
    return name, port


async def _refuse(send: Send, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
