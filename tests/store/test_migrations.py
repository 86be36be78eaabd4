"""A database written by an older nodeloom is upgraded when a store opens it, and keeps
its data: on SQLite and on Postgres."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import create_async_engine

from nodeloom.plugins.contract import Event
from nodeloom.store import Store, migrator
from nodeloom.store.schema import VERSION_TABLE
from nodeloom.store.url import database_url

CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


async def at_revision(url: str, revision: str, *statements: tuple[str, dict]) -> None:
    """Migrate a new database only up to `revision`, then run `statements` in it."""

    def upgrade(connection: Connection) -> None:
        config = migrator.alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    engine = create_async_engine(database_url(url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade)
            for statement, params in statements:
                await conn.execute(text(statement), params)
    finally:
        await engine.dispose()


async def test_a_0001_database_with_a_run_opens_upgraded_with_the_run_intact(
    store_url: str, tmp_path: Path
):
    # SQLite keeps times as SQLAlchemy writes them; asyncpg wants datetimes.
    at = CREATED if store_url.startswith("postgres") else "2026-01-02 03:04:05.000000"
    run = {"id": "old", "status": "paused", "created": at, "trigger": '{"message":"hi"}'}
    await at_revision(
        store_url,
        "0001",
        (
            "INSERT INTO runs (id, status, trigger, created_at, steps, heartbeat_at) "
            "VALUES (:id, :status, :trigger, :created, 2, :created)",
            run,
        ),
        *(
            (
                "INSERT INTO events (run_id, seq, type, data, timestamp) "
                "VALUES ('old', :seq, 'progress', NULL, 1.5)",
                {"seq": seq},
            )
            for seq in (1, 7, 3)
        ),
        (
            "INSERT INTO node_executions (run_id, node_id, execution, status, outputs, "
            "attempts, started_at) VALUES ('old', 'a', 1, 'completed', :outputs, 1, :at)",
            {"outputs": '{"output":1}', "at": at},
        ),
    )
    store = await Store.open(store_url, blob_dir=tmp_path)
    try:
        upgraded = await store.get_run("old")
        assert (upgraded.status, upgraded.trigger, upgraded.steps) == (
            "paused",
            {"message": "hi"},
            2,
        )
        assert (upgraded.created_at, upgraded.last_seq) == (CREATED, 7)  # from its events
        assert (upgraded.rerun_of, upgraded.rerun_from, upgraded.cancel_requested_at) == (
            None,
            None,
            None,
        )
        (node,) = await store.node_executions("old")
        assert (node.outputs, node.input_hash, node.state_delta) == ({"output": 1}, None, None)
        assert [e.seq for e in await store.events("old")] == [1, 3, 7]
        claimed = await store.claim_run("old")
        await store.write_batch("old", events=[Event("progress", {}, run_id="old", seq=8)])
        assert (claimed.status, await store.last_seq("old")) == ("running", 8)
    finally:
        await store.close()
    engine = create_async_engine(database_url(store_url))
    try:
        async with engine.connect() as conn:
            version = await conn.scalar(text(f"SELECT version_num FROM {VERSION_TABLE}"))
    finally:
        await engine.dispose()
    assert version == migrator.head() == "0004"
