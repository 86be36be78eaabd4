"""Outbound network access that cannot be turned against the host's own network.

Independent of nodes: the HTTP Request node and the server both use it.

    from nodeloom.net import Policy, guarded_stream, read_body

    async with guarded_stream("GET", url, policy=Policy(allow_private=False)) as response:
        body = await read_body(response, max_bytes=10 * 1024 * 1024)

`guard` decides which addresses are allowed; `client` sends HTTP requests that reach
only those, checking every redirect and pinning each connection to the checked address.
"""

from nodeloom.net.client import (
    InvalidURLError,
    ResponseTooLargeError,
    TooManyRedirectsError,
    display_url,
    guarded_request,
    guarded_stream,
    read_body,
)
from nodeloom.net.guard import (
    ENV_ALLOW_PRIVATE,
    NetworkPolicyError,
    Policy,
    Resolver,
    StaticResolver,
    is_forbidden_address,
    resolve_public,
    system_resolver,
)

__all__ = [
    "ENV_ALLOW_PRIVATE",
    "InvalidURLError",
    "NetworkPolicyError",
    "Policy",
    "Resolver",
    "ResponseTooLargeError",
    "StaticResolver",
    "TooManyRedirectsError",
    "display_url",
    "guarded_request",
    "guarded_stream",
    "is_forbidden_address",
    "read_body",
    "resolve_public",
    "system_resolver",
]
