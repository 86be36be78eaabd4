"""HTTP requests that only reach destinations the guard allows.

    guarded_stream(method, url, ...)   async context manager -> the final httpx.Response,
                                       body not read yet (read it with `read_body`)
    guarded_request(method, url, ...)  the same, body read into memory
    read_body(response, max_bytes=...) the decoded body, refused past a size limit
    display_url(url)                   a URL fit for messages (no credentials, no query)

Every hop is checked: the destination is resolved and checked by `resolve_public`, and
the connection goes to the checked IP address itself (the Host header and TLS SNI keep
the name), so a DNS answer that changes between the check and the connection (DNS
rebinding) cannot steer the request elsewhere. Redirects are followed here, one hop at a
time, so each new destination is checked before anything is sent to it.

Errors: `NetworkPolicyError` (a refused destination), `InvalidURLError` (not an http or
https URL), `TooManyRedirectsError`, `ResponseTooLargeError` (all `NodeError`s, not
retryable); network failures are httpx's own `httpx.TransportError`s, a name that does
not resolve included (`httpx.ConnectError`). Proxies from the environment are not used:
the guard must see the real destination.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from nodeloom.cassettes import player as cassette_player
from nodeloom.errors import NodeError
from nodeloom.net.guard import Policy, Resolver, parse_address_or_none, resolve_public

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DEFAULT_PORTS = {"http": 80, "https": 443}
# Headers that describe a request body: dropped when a redirect turns the request into a
# GET without a body (Fetch standard, "request-body-header name").
_BODY_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-location",
    "transfer-encoding",
)
# Credentials that must not follow a redirect to another origin.
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")


class _RequestError(NodeError):
    """A request that another attempt would not fix (not retryable by default)."""

    def __init__(
        self, message: str, *, retryable: bool = False, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, retryable=retryable, details=details)


class InvalidURLError(_RequestError):
    """A URL that cannot be requested: not http or https, no host, or malformed."""

    code = "invalid_url"


class TooManyRedirectsError(_RequestError):
    """A request was redirected more times than allowed (often a redirect loop)."""

    code = "too_many_redirects"


class ResponseTooLargeError(_RequestError):
    """A response body is larger than the caller agreed to hold in memory."""

    code = "http_response_too_large"


def display_url(url: httpx.URL | str) -> str:
    """`url` without user:password and with its query shown as `?…`: URLs land in error
    messages and logs, and both places may carry secrets (api_key=..., tokens)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "<invalid URL>"
    if not (parsed.userinfo or parsed.query or parsed.fragment):
        return str(parsed)
    shown = parsed.copy_with(username=None, password=None, query=None, fragment=None)
    return f"{shown}?…" if parsed.query else str(shown)


@dataclass(frozen=True)
class _Hop:
    """One request of a possibly redirected exchange."""

    method: str
    url: httpx.URL
    headers: httpx.Headers
    json_body: Any = None
    content: str | bytes | None = None


@contextlib.asynccontextmanager
async def guarded_stream(
    method: str,
    url: str | httpx.URL,
    *,
    policy: Policy | None = None,
    headers: Mapping[str, str | bytes] | None = None,
    params: Mapping[str, Any] | None = None,
    json_body: Any = None,
    content: str | bytes | None = None,
    timeout: float | httpx.Timeout = 30.0,
    follow_redirects: bool = True,
    max_redirects: int = 5,
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[httpx.Response]:
    """Send a request to a destination `policy` allows and yield the final response with
    its body unread; the connection closes when the block exits.

    `json_body` (any JSON value but None) or `content` (text or bytes) is the body.
    `timeout` applies to each connect, read and write, as in httpx. With
    `follow_redirects`, 301/302/303/307/308 are followed like a browser does (303, and
    301/302 after a POST, become a GET without body; credentials are dropped when the
    origin changes), at most `max_redirects` times. `resolver` replaces DNS (see
    `StaticResolver`); `transport` replaces the network (it is borrowed, not closed).
    `response.url` is the URL as named, not the pinned address.
    """
    if json_body is not None and content is not None:
        raise ValueError("pass json_body or content, not both")
    policy = policy or Policy()
    hop = _Hop(
        method=method.upper(),
        url=_checked_url(_parse_url(url), params),
        headers=httpx.Headers(headers or {}),
        json_body=json_body,
        content=content,
    )
    redirects = 0
    while True:
        async with contextlib.AsyncExitStack() as stack:
            response = await _send(stack, hop, policy, timeout, resolver, transport)
            location = response.headers.get("location")
            if not (follow_redirects and location and response.status_code in REDIRECT_STATUSES):
                yield response
                return
            if redirects >= max_redirects:
                raise TooManyRedirectsError(
                    f"{hop.method} {display_url(hop.url)} was redirected more than "
                    f"{max_redirects} times; the server may be redirecting in a loop. "
                    "Request the final URL directly, or return the redirect as it is "
                    "(follow_redirects: false) to see where it points"
                )
        redirects += 1
        hop = _redirected(hop, response.status_code, location)


async def guarded_request(
    method: str,
    url: str | httpx.URL,
    *,
    policy: Policy | None = None,
    headers: Mapping[str, str | bytes] | None = None,
    params: Mapping[str, Any] | None = None,
    json_body: Any = None,
    content: str | bytes | None = None,
    timeout: float | httpx.Timeout = 30.0,
    follow_redirects: bool = True,
    max_redirects: int = 5,
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.Response:
    """`guarded_stream` with the body read into memory (`response.content`, `.text`,
    `.json()` work). For bodies of unknown size, use `guarded_stream` and `read_body`."""
    async with guarded_stream(
        method,
        url,
        policy=policy,
        headers=headers,
        params=params,
        json_body=json_body,
        content=content,
        timeout=timeout,
        follow_redirects=follow_redirects,
        max_redirects=max_redirects,
        resolver=resolver,
        transport=transport,
    ) as response:
        await response.aread()
        return response


async def read_body(response: httpx.Response, *, max_bytes: int) -> bytes:
    """The decoded (decompressed) body of a streamed response, read chunk by chunk and
    refused with ResponseTooLargeError as soon as it passes `max_bytes`."""
    declared = response.headers.get("content-length", "")
    encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
    bodiless = response.request.method == "HEAD"  # declares the size of a body it omits
    if declared.isdigit() and not (encoded or bodiless) and int(declared) > max_bytes:
        raise _too_large(response, max_bytes, f"the server announced {int(declared)} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(response, max_bytes, "the body did not stop there")
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(response: httpx.Response, max_bytes: int, evidence: str) -> ResponseTooLargeError:
    request = response.request
    return ResponseTooLargeError(
        f"the response to {request.method} {display_url(request.url)} is larger than "
        f"{_size(max_bytes)} ({evidence}), the most that is read into memory. Ask the "
        "server for less: a page, a range, a filter or a smaller format",
        details={"max_bytes": max_bytes, "status": response.status_code},
    )


def _size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MB"
    return f"{n} bytes"


def _parse_url(url: str | httpx.URL) -> httpx.URL:
    if isinstance(url, httpx.URL):
        return url
    if not isinstance(url, str):
        raise InvalidURLError(f"a URL must be text, not {type(url).__name__}")
    try:
        return httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise InvalidURLError(f"the URL is malformed ({exc}); check it for typos") from None


def _checked_url(url: httpx.URL, params: Mapping[str, Any] | None = None) -> httpx.URL:
    if url.scheme not in DEFAULT_PORTS:
        hint = (
            " (add https:// in front)"
            if not url.scheme
            else f"; {url.scheme}: URLs are not fetched"
        )
        raise InvalidURLError(
            f"{display_url(url)!r} is not an http:// or https:// URL{hint}",
            details={"url": display_url(url)},
        )
    if not url.host:
        raise InvalidURLError(f"{display_url(url)!r} has no host name")
    return url.copy_merge_params(params) if params else url


async def _send(
    stack: contextlib.AsyncExitStack,
    hop: _Hop,
    policy: Policy,
    timeout: float | httpx.Timeout,
    resolver: Resolver | None,
    transport: httpx.AsyncBaseTransport | None,
) -> httpx.Response:
    """Resolve and check the hop's destination, then send it to a checked address (the
    next one if a connection is refused). The response and its client close with `stack`.
    """
    host = hop.url.raw_host.decode("ascii")  # IDNA-encoded, what DNS and TLS see
    port = hop.url.port or DEFAULT_PORTS[hop.url.scheme]
    try:
        if cassette_player.REPLAYING and transport is None:
            addresses = [host]  # a cassette answers: nothing leaves the process, no DNS
        else:
            addresses = await resolve_public(
                host, port, policy=policy, resolver=resolver, url=display_url(hop.url)
            )
    except OSError as exc:
        raise httpx.ConnectError(f"could not resolve {host}: {exc.strerror or exc}") from exc
    headers = httpx.Headers(hop.headers)
    headers["Host"] = hop.url.netloc.decode("ascii")
    # Pools key connections by address, not name: a kept-alive connection, verified for
    # one name, could carry a later request for another name through a shared transport.
    headers["Connection"] = "close"
    extensions: dict[str, Any] = {}
    if hop.url.scheme == "https" and parse_address_or_none(host) is None:
        extensions["sni_hostname"] = host  # TLS checks the certificate against the name
    # A client per hop, and no keep-alive: no connection outlives the request it was
    # checked for.
    client = await stack.enter_async_context(
        httpx.AsyncClient(
            transport=_Borrowed(transport) if transport else None,
            verify=_tls_context(),
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
        )
    )
    for index, address in enumerate(addresses):
        request = client.build_request(
            hop.method,
            hop.url.copy_with(host=address),
            headers=headers,
            json=hop.json_body,
            content=hop.content,
            extensions=extensions,
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.ConnectError:
            if index == len(addresses) - 1:
                raise
            continue
        stack.push_async_callback(response.aclose)
        request.url = hop.url  # callers see the URL they named, not the pinned address
        return response
    raise AssertionError("resolve_public returns at least one address")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context (certifi's roots) for every client: building one reads
    the CA bundle and takes ~50 ms. Certificates are checked against the SNI name."""
    return httpx.create_ssl_context(trust_env=False)


def _redirected(hop: _Hop, status: int, location: str) -> _Hop:
    """The next hop after a redirect, rewritten the way browsers do (Fetch standard)."""
    source = f"{hop.method} {display_url(hop.url)}"
    try:
        target = hop.url.join(location)
    except httpx.InvalidURL:
        raise InvalidURLError(f"{source} redirected to a malformed Location") from None
    if target.scheme not in DEFAULT_PORTS or not target.host:
        raise InvalidURLError(
            f"{source} redirected to {display_url(target)!r}, which is not an http:// or "
            "https:// URL; such redirects are not followed (follow_redirects: false returns "
            "the redirect as it is)"
        )
    if not target.fragment and hop.url.fragment:
        target = target.copy_with(fragment=hop.url.fragment)
    headers = httpx.Headers(hop.headers)
    if _origin(target) != _origin(hop.url):
        for name in _CREDENTIAL_HEADERS:
            headers.pop(name, None)
    turns_into_get = (status == 303 and hop.method not in ("GET", "HEAD")) or (
        status in (301, 302) and hop.method == "POST"
    )
    if turns_into_get:
        for name in _BODY_HEADERS:
            headers.pop(name, None)
        return replace(hop, method="GET", url=target, headers=headers, json_body=None, content=None)
    return replace(hop, url=target, headers=headers)


def _origin(url: httpx.URL) -> tuple[str, bytes, int | None]:
    return url.scheme, url.raw_host, url.port or DEFAULT_PORTS.get(url.scheme)


class _Borrowed(httpx.AsyncBaseTransport):
    """Lends a caller's transport to our per-hop clients without letting them close it."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)


__all__ = [
    "InvalidURLError",
    "ResponseTooLargeError",
    "TooManyRedirectsError",
    "display_url",
    "guarded_request",
    "guarded_stream",
    "read_body",
]
