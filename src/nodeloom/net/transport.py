"""An httpx transport that only reaches destinations the guard allows, for clients that
third-party SDKs drive (the OpenAI and Anthropic SDKs take an `httpx.AsyncClient`).

    client = httpx.AsyncClient(transport=GuardedTransport(policy), trust_env=False)

Each request (each redirect hop too: the client sends every hop through the transport) is
resolved and checked by `resolve_public` with the policy `policy_for(url)` gives, and sent
to a checked address itself (the Host header and TLS SNI keep the name), as
`nodeloom.net.client` does for one-off requests. Connections are pooled per host name, so a
connection verified for one name never carries a request for another. `inspect` sees each
request first and may refuse it by raising.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from nodeloom.net.client import DEFAULT_PORTS, InvalidURLError, _tls_context, display_url
from nodeloom.net.guard import Policy, Resolver, parse_address_or_none, resolve_public

PolicyFor = Callable[[httpx.URL], Policy]


class GuardedTransport(httpx.AsyncBaseTransport):
    """Sends requests only to addresses `policy` (or `policy_for(url)`) allows."""

    def __init__(
        self,
        policy: Policy | PolicyFor | None = None,
        *,
        resolver: Resolver | None = None,
        inspect: Callable[[httpx.Request], None] | None = None,
    ) -> None:
        fixed = policy or Policy()
        self._policy_for: PolicyFor = (lambda _url: fixed) if isinstance(fixed, Policy) else fixed
        self._resolver = resolver
        self._inspect = inspect
        self._pools: dict[tuple[str, str, int], httpx.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in DEFAULT_PORTS or not url.host:
            raise InvalidURLError(f"{display_url(url)!r} is not an http:// or https:// URL")
        if self._inspect is not None:
            self._inspect(request)
        host = url.raw_host.decode("ascii")
        port = url.port or DEFAULT_PORTS[url.scheme]
        try:
            addresses = await resolve_public(
                host,
                port,
                policy=self._policy_for(url),
                resolver=self._resolver,
                url=display_url(url),
            )
        except OSError as exc:
            raise httpx.ConnectError(f"could not resolve {host}: {exc.strerror or exc}") from exc
        pool = self._pool(url.scheme, host, port)
        request.headers["Host"] = url.netloc.decode("ascii")
        if url.scheme == "https" and parse_address_or_none(host) is None:
            request.extensions = {**request.extensions, "sni_hostname": host}
        try:
            for index, address in enumerate(addresses):
                request.url = url.copy_with(host=address)
                try:
                    return await pool.handle_async_request(request)
                except httpx.ConnectError:
                    if index == len(addresses) - 1:
                        raise
        finally:
            request.url = url  # callers see the URL they named, not the pinned address
        raise AssertionError("resolve_public returns at least one address")

    def _pool(self, scheme: str, host: str, port: int) -> httpx.AsyncHTTPTransport:
        key = (scheme, host.lower(), port)
        pool = self._pools.get(key)
        if pool is None:
            pool = httpx.AsyncHTTPTransport(verify=_tls_context(), trust_env=False)
            self._pools[key] = pool
        return pool

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()


class Borrowed(httpx.AsyncBaseTransport):
    """Lends a transport to another client without letting that client close it."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)


__all__ = ["Borrowed", "GuardedTransport", "PolicyFor"]
