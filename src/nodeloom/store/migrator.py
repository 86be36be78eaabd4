"""Check a database before touching it, then bring its schema to the newest revision.

The check reads only (a SQLite file is opened read-only, outside SQLAlchemy) and refuses:

- a file that is not SQLite, or is damaged                      -> store_corrupt
- a database with tables but no nodeloom schema version          -> store_corrupt
- a schema version this nodeloom does not know (a newer release) -> store_newer_schema

Only then are the Alembic migrations (`migrations/versions/`) run, in one write
transaction that holds the database's write lock (SQLite `BEGIN IMMEDIATE`, a Postgres
advisory lock), so two processes opening a new database at once migrate it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.database import Database
from nodeloom.store.errors import StoreCorruptError, StoreNewerSchemaError, StoreUnavailableError
from nodeloom.store.schema import VERSION_TABLE, StoreMeta

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"
_PG_LOCK_KEY = 0x6E6F64656C6F6F6D  # "nodeloom"


@dataclass(frozen=True, slots=True)
class Found:
    """What the check found: the tables, and the schema revision if any."""

    tables: tuple[str, ...]
    revision: str | None


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def known_revisions() -> set[str]:
    script = ScriptDirectory.from_config(alembic_config())
    return {revision.revision for revision in script.walk_revisions()}


def head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


async def check(db: Database) -> Found:
    """Read what the database holds and refuse what nodeloom must not migrate."""
    if db.path is not None:
        found = await asyncio.to_thread(_read_sqlite_file, db.path, db.name)
    else:
        found = await db.read(_read_async)
    if found.revision is None:
        if found.tables:
            shown = ", ".join(found.tables[:8]) + (", ..." if len(found.tables) > 8 else "")
            raise StoreCorruptError(
                f"{db.name} is not a nodeloom database: it has tables ({shown}) but no "
                f"{VERSION_TABLE} table. It was left untouched. Point NODELOOM_DATABASE_URL "
                "at a new file or an empty database"
            )
    elif found.revision not in known_revisions():
        raise _newer(db, found.revision)
    return found


async def upgrade(db: Database) -> None:
    """Migrate to the newest revision (nothing to do if already there)."""

    def run(connection: Connection) -> None:
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"SELECT pg_advisory_xact_lock({_PG_LOCK_KEY})"))
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

    async def work(conn: AsyncConnection) -> None:
        try:
            await conn.run_sync(run)
        except CommandError as exc:
            revision = await conn.run_sync(_revision)
            if revision is not None and revision not in known_revisions():
                raise _newer(db, revision) from exc
            raise

    await db.write(work)


async def store_id(db: Database) -> str:
    async def work(conn: AsyncConnection) -> str:
        value = await conn.scalar(select(StoreMeta.value).where(StoreMeta.key == "store_id"))
        if value is None:
            raise StoreCorruptError(f"{db.name} has no store id in store_meta")
        return value

    return await db.read(work)


def _newer(db: Database, revision: str) -> StoreNewerSchemaError:
    return StoreNewerSchemaError(
        f"{db.name} was written by a newer nodeloom (schema revision {revision!r}; this "
        f"version knows up to {head()!r}). It was left untouched. Upgrade nodeloom "
        "(pip install -U nodeloom), or point NODELOOM_DATABASE_URL at another database"
    )


def _read_sqlite_file(path: Path, name: str) -> Found:
    try:
        if not path.exists() or path.stat().st_size == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            return Found((), None)
    except OSError as exc:
        raise StoreUnavailableError(
            f"cannot create {name}: {exc}. Choose a writable location "
            "(NODELOOM_DATABASE_URL or NODELOOM_DATA_DIR)"
        ) from exc
    try:
        with open(path, "rb") as file:
            header = file.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreCorruptError(f"cannot read {name}: {exc}") from exc
    if header != SQLITE_MAGIC:
        raise StoreCorruptError(
            f"{name} is not a SQLite database (its first bytes are not the SQLite header). "
            "It was left untouched. Move it away (nodeloom then starts a new one), restore "
            "it from a backup, or point NODELOOM_DATABASE_URL at another file"
        )
    # A damaged header may claim WAL mode; opening the file then creates these two.
    companions = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    existed = {companion for companion in companions if companion.exists()}
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).fetchall()
            tables = tuple(row[0] for row in rows)
            revision = None
            if VERSION_TABLE in tables:
                row = connection.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchone()
                revision = row[0] if row else None
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        for companion in set(companions) - existed:
            with contextlib.suppress(OSError):  # ours, and empty: leave things as found
                companion.unlink(missing_ok=True)
        raise StoreCorruptError(
            f"{name} is damaged ({exc}). It was left untouched. Restore it from a backup, "
            "or move it away so that nodeloom starts a new one"
        ) from exc
    return Found(tables, revision)


async def _read_async(conn: AsyncConnection) -> Found:
    return await conn.run_sync(_read_sync)


def _read_sync(connection: Connection) -> Found:
    tables = tuple(sorted(inspect(connection).get_table_names()))
    revision = _revision(connection) if VERSION_TABLE in tables else None
    return Found(tables, revision)


def _revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def main(argv: list[str]) -> int:
    """`python -m nodeloom.store.migrator revision "message"`: autogenerate a revision
    from the difference between the models and a scratch database at head."""
    if len(argv) != 2 or argv[0] != "revision":
        print('usage: python -m nodeloom.store.migrator revision "message"', file=sys.stderr)
        return 2
    from sqlalchemy import create_engine

    engine = create_engine("sqlite://")
    with engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        command.revision(config, message=argv[1], autogenerate=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
