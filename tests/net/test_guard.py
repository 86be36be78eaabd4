"""Which addresses the guard refuses, and how names are resolved and checked."""

from __future__ import annotations

import socket

import pytest

from nodeloom.net import (
    ENV_ALLOW_PRIVATE,
    NetworkPolicyError,
    Policy,
    StaticResolver,
    is_forbidden_address,
    resolve_public,
)


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.100.100.200", "private"),  # carrier-grade NAT (Alibaba Cloud metadata)
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.1.2.3", "reserved"),
        ("192.0.2.1", "reserved"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("2001:db8::1", "reserved"),
        ("::7f00:1", "reserved"),  # deprecated IPv4-compatible address
        # IPv6 addresses that lead to an IPv4 address are judged by that address
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.0.0.1", "private"),
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 of 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"),  # Teredo, client 192.0.2.45
        # public
        ("8.8.8.8", None),
        ("93.184.215.14", None),
        ("172.32.0.1", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::808:808", None),
        ("2002:808:808::1", None),
    ],
)
def test_addresses_are_classified(address: str, reason: str | None) -> None:
    assert is_forbidden_address(address) == reason


def test_a_non_address_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        is_forbidden_address("example.com")


FORBIDDEN = ["127.0.0.1", "::1", "10.1.2.3", "192.168.0.10", "169.254.169.254", "::ffff:127.0.0.1"]


@pytest.mark.parametrize("address", FORBIDDEN)
async def test_forbidden_literals_are_refused(address: str) -> None:
    with pytest.raises(NetworkPolicyError) as caught:
        await resolve_public(address, 80, policy=Policy())
    error = caught.value
    assert error.code == "ssrf_blocked"
    assert error.retryable is False
    assert error.details["host"] == address
    assert str(error).startswith(f"refused to connect to {address} (")


async def test_a_public_literal_is_returned_without_dns() -> None:
    resolver = StaticResolver({})
    assert await resolve_public("8.8.8.8", 443, resolver=resolver) == ["8.8.8.8"]
    assert resolver.queries == []


async def test_localhost_is_refused_after_resolution() -> None:
    with pytest.raises(NetworkPolicyError, match=r"localhost \(resolves to .*a loopback address\)"):
        await resolve_public("localhost", 80)


async def test_a_name_that_resolves_to_a_private_address_is_refused() -> None:
    resolver = StaticResolver({"evil.example": "10.0.0.5"})
    with pytest.raises(NetworkPolicyError) as caught:
        await resolve_public("evil.example", 80, resolver=resolver, url="http://evil.example/admin")
    assert str(caught.value) == (
        "refused to connect to evil.example (resolves to 10.0.0.5, a private address) for "
        "http://evil.example/admin: private, loopback and link-local destinations are "
        f"blocked. Set {ENV_ALLOW_PRIVATE}=1 to allow them"
    )
    assert resolver.queries == [("evil.example", 80)]


async def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    resolver = StaticResolver({"mixed.example": ["93.184.215.14", "169.254.169.254"]})
    with pytest.raises(NetworkPolicyError, match="link-local"):
        await resolve_public("mixed.example", 443, resolver=resolver)


async def test_a_public_name_resolves_to_its_addresses_in_order() -> None:
    resolver = StaticResolver({"api.example": ["93.184.215.14", "2606:2800::1", "93.184.215.14"]})
    assert await resolve_public("api.example", 443, resolver=resolver) == [
        "93.184.215.14",
        "2606:2800::1",
    ]


async def test_the_message_for_a_literal_names_the_address_and_the_fix() -> None:
    policy = Policy(how_to_allow="allow_private_network: true on the node")
    with pytest.raises(NetworkPolicyError) as caught:
        await resolve_public(
            "169.254.169.254", 80, policy=policy, url="http://169.254.169.254/latest"
        )
    assert str(caught.value) == (
        "refused to connect to 169.254.169.254 (link-local address) for "
        "http://169.254.169.254/latest: private, loopback and link-local destinations are "
        "blocked. Set allow_private_network: true on the node to allow them"
    )


async def test_allow_private_lets_every_address_through() -> None:
    resolver = StaticResolver({"db.internal": "10.0.0.5"})
    policy = Policy(allow_private=True)
    assert await resolve_public("db.internal", 5432, policy=policy, resolver=resolver) == [
        "10.0.0.5"
    ]
    assert await resolve_public("127.0.0.1", 80, policy=policy) == ["127.0.0.1"]


async def test_the_environment_variable_allows_private_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = Policy()  # made before the variable is set: it is read at check time
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "1")
    assert await resolve_public("127.0.0.1", 80, policy=policy) == ["127.0.0.1"]
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "0")
    with pytest.raises(NetworkPolicyError):
        await resolve_public("127.0.0.1", 80, policy=policy)


def test_allowed_addresses_and_networks_are_exempt() -> None:
    policy = Policy(allowed=frozenset({"127.0.0.1", "10.1.0.0/16"}))
    assert policy.refusal("127.0.0.1") is None
    assert policy.refusal("::ffff:127.0.0.1") is None
    assert policy.refusal("10.1.200.3") is None
    assert policy.refusal("127.0.0.2") == "loopback"
    assert policy.refusal("10.2.0.1") == "private"
    assert policy.refusal("169.254.169.254") == "link-local"


def test_a_policy_rejects_an_allowed_entry_that_is_not_an_address() -> None:
    with pytest.raises(ValueError, match="'intranet' is neither"):
        Policy(allowed=frozenset({"intranet"}))


async def test_a_name_that_does_not_resolve_is_an_os_error() -> None:
    with pytest.raises(socket.gaierror):
        await resolve_public("nowhere.example", 80, resolver=StaticResolver({}))


async def test_a_name_with_no_addresses_is_an_os_error() -> None:
    with pytest.raises(socket.gaierror, match="no addresses"):
        await resolve_public("empty.example", 80, resolver=StaticResolver({"empty.example": []}))


async def test_the_static_resolver_can_fall_back() -> None:
    fallback = StaticResolver({"other.example": "93.184.215.14"})
    resolver = StaticResolver({"api.example": "203.0.113.9"}, fallback=fallback)
    assert await resolver("other.example", 80) == ["93.184.215.14"]
    assert fallback.queries == [("other.example", 80)]
