"""Postgres-only behaviour: a server or database that is not there."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import asyncpg
import pytest

from nodeloom.store import Store, StoreUnavailableError, database
from nodeloom.testing.stores import create_database


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


@pytest.mark.parametrize("idle", [0.05, 1e9], ids=["pinged", "checked-locally"])
async def test_a_pooled_connection_killed_while_idle_is_replaced_before_the_next_write(
    postgres_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, idle: float
):
    # No ping at every checkout (a round trip per transaction): a connection idle for
    # PING_IDLE_SECONDS is pinged, one used moments ago checked locally (the driver saw
    # the server hang up); either way it is replaced if the server dropped it meanwhile.
    monkeypatch.setattr(database, "PING_IDLE_SECONDS", idle)
    url = await create_database(postgres_server)
    store = await Store.open(url, blob_dir=tmp_path / "blobs")
    try:
        await store.create_run(run_id="before")
        admin = await asyncpg.connect(f"{postgres_server}/postgres")
        try:
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
                url.rsplit("/", 1)[1],
            )
        finally:
            await admin.close()
        assert killed >= 1
        await asyncio.sleep(0.2)
        assert (await store.create_run(run_id="after")).id == "after"
        assert (await store.get_run("before")).status == "running"
    finally:
        await store.close()
