"""An HTTP client for a URL MCP server that connects only to the addresses the guard
checked, so DNS rebinding between the check and the connection cannot reach another one.

The MCP SDK's client (httpx2) would resolve the server's name again when it connects; a
name that answered a public address to the check and a private one a moment later would
steer the session into the host's own network. Here every request goes to the checked IP
itself (the next one if a connection is refused), with the `Host` header and the TLS SNI
(so the certificate check) of the name, as `nodeloom.net.client` does for HTTP Request.
A request for any other host (the SDK follows redirects within the origin only) is
refused.
"""

from __future__ import annotations

from typing import Any

import httpx2

DEFAULT_TIMEOUT = 30.0  # as the MCP SDK's client: operations, and the stream's read
DEFAULT_READ_TIMEOUT = 300.0


class PinnedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, host: str, addresses: list[str]) -> None:
        self.host = host.lower()
        self.addresses = addresses
        self.inner = httpx2.AsyncHTTPTransport(trust_env=False)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.raw_host.decode("ascii").lower() != self.host:
            raise httpx2.ConnectError(
                f"the MCP session may only reach {self.host}, not {request.url.host}",
                request=request,
            )
        named = request.url
        if named.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": self.host}
        for index, address in enumerate(self.addresses):
            request.url = named.copy_with(host=address)  # the Host header keeps the name
            try:
                return await self.inner.handle_async_request(request)
            except httpx2.ConnectError:
                if index == len(self.addresses) - 1:
                    raise
            finally:
                request.url = named
        raise AssertionError("resolve_public returns at least one address")

    async def aclose(self) -> None:
        await self.inner.aclose()


def pinned_client_factory(host: str, addresses: list[str]) -> Any:
    """An `httpx_client_factory` (MCP SDK / fastmcp) whose clients reach only `addresses`."""

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **_: Any,
    ) -> httpx2.AsyncClient:
        options: dict[str, Any] = {
            "transport": PinnedTransport(host, addresses),
            "timeout": timeout or httpx2.Timeout(DEFAULT_TIMEOUT, read=DEFAULT_READ_TIMEOUT),
            "trust_env": False,  # a proxy would resolve the name itself
        }
        if headers is not None:
            options["headers"] = headers
        if auth is not None:
            options["auth"] = auth
        return httpx2.AsyncClient(**options)

    return factory
