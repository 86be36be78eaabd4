"""Postgres-only behaviour: a server or database that is not there."""

from __future__ import annotations

import socket

import pytest

from nodeloom.store import Store, StoreUnavailableError


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_an_unreachable_server_gives_store_unavailable_without_the_password():
    url = f"postgresql://nodeloom:s3cret@127.0.0.1:{closed_port()}/nodeloom"
    with pytest.raises(StoreUnavailableError, match="server runs") as caught:
        await Store.open(url)
    assert caught.value.code == "store_unavailable"
    assert "s3cret" not in str(caught.value) and "127.0.0.1" in str(caught.value)


async def test_a_missing_database_gives_store_unavailable_naming_createdb(postgres_server: str):
    with pytest.raises(StoreUnavailableError, match=r"no_such_db.*createdb"):
        await Store.open(f"{postgres_server}/no_such_db")
