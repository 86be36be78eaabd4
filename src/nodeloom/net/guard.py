"""Which network destinations nodeloom may reach: address classification and resolution.

A workflow is code written by whoever can edit the graph, so an HTTP call in it must not
become a way into the machine's own network (server-side request forgery): loopback
services, the private LAN, cloud metadata at 169.254.169.254. The guard refuses those
destinations *after* DNS resolution, so a public-looking name that resolves to 10.0.0.5
is refused too, and hands back the checked addresses so the caller can connect to exactly
them (see `nodeloom.net.client`, which pins the connection to defeat DNS rebinding).

    is_forbidden_address(ip)   why an address is not public, or None
    Policy                     what a caller allows: private networks, exempt addresses
    resolve_public(host, port) resolve and check; raises NetworkPolicyError
    system_resolver            the default resolver (the event loop's getaddrinfo)
    StaticResolver             a resolver from a fixed table (tests, pinned hosts)
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nodeloom.errors import NodeError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""`await resolver(host, port)` -> the host's addresses as strings; raises OSError."""

ENV_ALLOW_PRIVATE = "NODELOOM_ALLOW_PRIVATE_NETWORK"
_TRUE = frozenset({"1", "true", "yes", "on"})

# Special-purpose ranges and why each is refused; the first match wins, so a more
# specific range comes before the range that contains it. Anything else that Python does
# not consider globally routable is "reserved" (see `is_forbidden_address`).
_SPECIAL_RANGES: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(network), reason)
    for network, reason in (
        ("0.0.0.0/32", "unspecified"),
        ("0.0.0.0/8", "reserved"),  # "this network"; Linux routes 0.x to the host itself
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "private"),  # carrier-grade NAT; some cloud metadata lives here
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),  # includes 169.254.169.254, cloud metadata
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "reserved"),  # documentation
        ("192.88.99.0/24", "reserved"),  # old 6to4 relays
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),  # benchmarking
        ("198.51.100.0/24", "reserved"),  # documentation
        ("203.0.113.0/24", "reserved"),  # documentation
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),  # includes the broadcast address 255.255.255.255
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"),  # local-use NAT64
        ("100::/64", "reserved"),  # discard
        ("2001:db8::/32", "reserved"),  # documentation
        ("fc00::/7", "private"),  # unique local
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private"),  # deprecated site-local
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def parse_address(ip: str | IPAddress) -> IPAddress:
    """An address object from text (an IPv6 zone like `%eth0` is dropped); ValueError if
    `ip` is not an IP address."""
    if isinstance(ip, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return ip
    return ipaddress.ip_address(ip.split("%", 1)[0])


def is_forbidden_address(ip: str | IPAddress) -> str | None:
    """Why `ip` is not a public destination ("loopback", "private", "link-local",
    "unspecified", "multicast", "reserved"), or None when it is public.

    IPv6 addresses that carry an IPv4 address (IPv4-mapped `::ffff:127.0.0.1`, NAT64
    `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`) are judged by the IPv4 address
    they lead to. Raises ValueError if `ip` is not an IP address.
    """
    address = parse_address(ip)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return _first_reason(embedded)
    for network, reason in _SPECIAL_RANGES:
        if address.version == network.version and address in network:
            return reason
    if not address.is_global or address.is_reserved:
        return "reserved"
    return None


def _embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address] | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address in _NAT64:
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)  # (server, client): the packets reach both
    return None


def _first_reason(addresses: Iterable[ipaddress.IPv4Address]) -> str | None:
    for address in addresses:
        reason = is_forbidden_address(address)
        if reason is not None:
            return reason
    return None


def private_network_allowed_by_environment() -> bool:
    """Whether NODELOOM_ALLOW_PRIVATE_NETWORK is set to 1/true/yes/on (read each call)."""
    return os.environ.get(ENV_ALLOW_PRIVATE, "").strip().lower() in _TRUE


@dataclass(frozen=True)
class Policy:
    """What a caller allows beyond public addresses.

    `allow_private` turns the guard off (every address is allowed). `allowed` lists
    addresses or CIDR networks exempt from it, e.g. `{"10.1.2.3", "192.168.0.0/24"}`, for
    an internal service an operator trusts. `how_to_allow` completes the refusal message
    "Set ... to allow them", so each caller can point at its own switch.
    The environment variable NODELOOM_ALLOW_PRIVATE_NETWORK=1 allows everything too; it is
    read when a destination is checked, not when the policy is made.
    """

    allow_private: bool = False
    allowed: frozenset[str] = frozenset()
    how_to_allow: str = f"{ENV_ALLOW_PRIVATE}=1"
    _allowed_networks: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        allowed = frozenset(self.allowed)
        networks = []
        for entry in sorted(allowed):
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(
                    f"Policy.allowed takes IP addresses or CIDR networks such as "
                    f"'10.1.2.3' or '192.168.0.0/24'; {entry!r} is neither"
                ) from None
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "_allowed_networks", tuple(networks))

    def refusal(self, ip: str | IPAddress) -> str | None:
        """Why this policy refuses `ip` (see `is_forbidden_address`), or None."""
        if self.allow_private or private_network_allowed_by_environment():
            return None
        address = parse_address(ip)
        if self._is_exempt(address):
            return None
        return is_forbidden_address(address)

    def _is_exempt(self, address: IPAddress) -> bool:
        candidates: list[IPAddress] = [address]
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            candidates.append(address.ipv4_mapped)
        return any(
            candidate.version == network.version and candidate in network
            for candidate in candidates
            for network in self._allowed_networks
        )


class NetworkPolicyError(NodeError):
    """A destination was refused because it is not public (server-side request forgery
    protection). Not retryable: the same destination will be refused again."""

    code = "ssrf_blocked"

    def __init__(
        self, message: str, *, retryable: bool = False, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, retryable=retryable, details=details)

    @classmethod
    def refusing(
        cls,
        *,
        host: str,
        address: str,
        reason: str,
        url: str | None = None,
        how_to_allow: str = f"{ENV_ALLOW_PRIVATE}=1",
    ) -> NetworkPolicyError:
        """The error for `host` (whose address `address` is `reason`), with the fix."""
        if parse_address_or_none(host) is not None:
            target = f"{host} ({reason} address)"
        else:
            article = "an" if reason[0] in "aeiou" else "a"
            target = f"{host} (resolves to {address}, {article} {reason} address)"
        where = f" for {url}" if url else ""
        return cls(
            f"refused to connect to {target}{where}: private, loopback and link-local "
            f"destinations are blocked. Set {how_to_allow} to allow them",
            details={"host": host, "address": address, "reason": reason, "url": url},
        )


def parse_address_or_none(host: str) -> IPAddress | None:
    """The address if `host` is an IP literal (brackets allowed), else None."""
    try:
        return parse_address(host.strip("[]"))
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses, in the order the system prefers, via the loop's getaddrinfo."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class StaticResolver:
    """A resolver that answers from a fixed table, like an /etc/hosts file.

    `StaticResolver({"api.example": ["203.0.113.7"]})`. Unknown names fail as DNS does
    (`socket.gaierror`), or go to `fallback` if one is given. `queries` records every
    (host, port) asked, so a test can see what was resolved.
    """

    def __init__(
        self, table: Mapping[str, str | Sequence[str]], *, fallback: Resolver | None = None
    ) -> None:
        self.table = {
            name.lower(): [addresses] if isinstance(addresses, str) else list(addresses)
            for name, addresses in table.items()
        }
        self.fallback = fallback
        self.queries: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.queries.append((host, port))
        addresses = self.table.get(host.lower())
        if addresses is not None:
            return list(addresses)
        if self.fallback is not None:
            return list(await self.fallback(host, port))
        raise socket.gaierror(socket.EAI_NONAME, f"{host} is not in the resolver's table")


async def resolve_public(
    host: str,
    port: int,
    *,
    policy: Policy | None = None,
    resolver: Resolver | None = None,
    url: str | None = None,
) -> list[str]:
    """Resolve `host` and return its addresses if `policy` allows every one of them.

    An IP literal is checked as it is, without DNS. Raises NetworkPolicyError if ANY
    address is refused (a name with one public and one private address could be steered
    to the private one), and OSError (socket.gaierror) if the name does not resolve.
    `url` only makes the refusal message clearer. The default policy refuses every
    non-public address.
    """
    policy = policy or Policy()
    literal = parse_address_or_none(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        resolved = await (resolver or system_resolver)(host, port)
        addresses = list(dict.fromkeys(resolved))  # drop duplicates, keep the order
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} resolved to no addresses")
    for address in addresses:
        reason = policy.refusal(address)
        if reason is not None:
            raise NetworkPolicyError.refusing(
                host=host,
                address=address,
                reason=reason,
                url=url,
                how_to_allow=policy.how_to_allow,
            )
    return addresses


__all__ = [
    "ENV_ALLOW_PRIVATE",
    "NetworkPolicyError",
    "Policy",
    "Resolver",
    "StaticResolver",
    "is_forbidden_address",
    "parse_address",
    "parse_address_or_none",
    "private_network_allowed_by_environment",
    "resolve_public",
    "system_resolver",
]
