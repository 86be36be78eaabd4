"""GuardedTransport: an httpx client that SDKs drive reaches only what the policy allows,
pinned to the checked address, every redirect hop checked."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from nodeloom.net import ENV_ALLOW_PRIVATE, NetworkPolicyError, Policy, StaticResolver
from nodeloom.net.transport import GuardedTransport

from .test_client import LOOPBACK_ONLY, OPEN, _serve, _Server


@pytest.fixture
def server() -> Iterator[_Server]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def other_server() -> Iterator[_Server]:
    yield from _serve("127.0.0.2")


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


def client(policy: Policy | None = None, **options: object) -> httpx.AsyncClient:
    transport = GuardedTransport(policy, **options)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=True)


async def test_a_loopback_server_is_refused_by_default_and_reached_when_allowed(server: _Server):
    async with client() as refused:
        with pytest.raises(NetworkPolicyError, match="loopback"):
            await refused.get(server.url("/echo"))
    assert server.seen == []
    async with client(OPEN) as allowed:
        response = await allowed.get(server.url("/echo"))
    assert response.json()["path"] == "/echo"


async def test_the_connection_is_pinned_to_the_checked_address_with_the_name_as_host(
    server: _Server,
):
    resolver = StaticResolver({"svc.test": "127.0.0.1"})
    url = f"http://svc.test:{server.port}/echo"
    async with client(OPEN, resolver=resolver) as pinned:
        response = await pinned.get(url)
    assert response.json()["headers"]["host"] == f"svc.test:{server.port}"
    assert response.url == httpx.URL(url)


async def test_each_redirect_hop_is_checked(server: _Server, other_server: _Server):
    target = other_server.url("/echo")
    async with client(LOOPBACK_ONLY) as guarded:
        with pytest.raises(NetworkPolicyError, match=r"127\.0\.0\.2"):
            await guarded.get(server.url(f"/redirect?to={target}"))
    assert other_server.seen == []


async def test_inspect_may_refuse_a_request_before_it_is_sent(server: _Server):
    def no_secrets(request: httpx.Request) -> None:
        if "secret" in request.headers.get("authorization", ""):
            raise PermissionError("not there")

    async with client(OPEN, inspect=no_secrets) as guarded:
        with pytest.raises(PermissionError):
            await guarded.get(server.url("/echo"), headers={"Authorization": "Bearer secret"})
        assert (await guarded.get(server.url("/echo"))).status_code == 200
    assert len(server.seen) == 1
