"""`/mcp`: the published flows as MCP tools over streamable HTTP, behind the same bearer
tokens as /api (none with --dev, where DevGuard applies as everywhere). The session
manager lives as long as the server (opened in the app's lifespan)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.types import Receive, Scope, Send

from nodeloom.server.runtime import ServerState

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

PATH = "/mcp"


class McpEndpoint:
    """The ASGI app at /mcp: checks the token, then hands the request to the manager."""

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None
        self.state: ServerState | None = None

    @contextlib.asynccontextmanager
    async def running(self, state: ServerState) -> AsyncIterator[None]:
        # Imported when the server starts, not with `nodeloom.server.app` (the MCP
        # server's modules take about a second to import).
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from nodeloom.publishing import PublishedFlows, mcp_server

        self.state = state
        self.manager = StreamableHTTPSessionManager(
            app=mcp_server(PublishedFlows(state.runs)),
            # Hosts and origins: the bearer token (or --dev's DevGuard) guards this route.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with self.manager.run():
            yield
        self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None or self.state is None:
            await _refuse(send, 503, "unavailable", "the MCP endpoint is not running")
            return
        if not self.state.config.dev and not self._authorised(scope):
            await _refuse(
                send,
                401,
                "unauthorized",
                "missing or invalid `Authorization: Bearer <token>` header; create a token "
                "with `nodeloom token create NAME`",
            )
            return
        await self.manager.handle_request(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        assert self.state is not None
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                return scheme.lower() == "bearer" and self.state.tokens.verify(token) is not None
        return False


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["PATH", "McpEndpoint"]
