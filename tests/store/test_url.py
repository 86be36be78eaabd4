"""Which database the store opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodeloom.store import Store, StoreUnavailableError, database_url


def test_the_default_is_nodeloom_db_in_the_data_directory(data_dir: Path, monkeypatch):
    monkeypatch.delenv("NODELOOM_DATABASE_URL", raising=False)
    url = database_url()
    assert url.drivername == "sqlite+aiosqlite"
    assert url.database == str(data_dir / "nodeloom.db")


def test_nodeloom_database_url_overrides_the_default(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("NODELOOM_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    assert database_url().render_as_string() == f"sqlite+aiosqlite:///{tmp_path}/x.db"


def test_an_argument_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("NODELOOM_DATABASE_URL", "sqlite:///ignored.db")
    assert database_url("sqlite:///chosen.db").database == "chosen.db"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u:p@h:5432/db", "postgresql+asyncpg://u:p@h:5432/db"),
        ("postgres://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("sqlite:////abs/n.db", "sqlite+aiosqlite:////abs/n.db"),
        ("sqlite+aiosqlite:///rel.db", "sqlite+aiosqlite:///rel.db"),
    ],
)
def test_plain_urls_are_mapped_to_the_async_drivers(given: str, expected: str):
    assert database_url(given).render_as_string(hide_password=False) == expected


def test_an_unsupported_scheme_lists_the_supported_ones():
    with pytest.raises(StoreUnavailableError, match=r"mysql.*supported: postgres, postgresql"):
        database_url("mysql://u:secret@h/db")


async def test_opening_without_a_url_creates_the_database_and_blobs_in_the_data_dir(
    data_dir: Path, monkeypatch
):
    monkeypatch.delenv("NODELOOM_DATABASE_URL", raising=False)
    store = await Store.open()
    try:
        run = await store.create_run()
        await store.record_node(run.id, "a", status="completed", outputs={"o": "b" * 300_000})
        assert store.blob_dir == data_dir / "blobs" / store.store_id
    finally:
        await store.close()
    assert (data_dir / "nodeloom.db").is_file()
    assert any((data_dir / "blobs").rglob("*"))


async def test_an_in_memory_database_works_for_tests(tmp_path: Path):
    store = await Store.open("sqlite://", blob_dir=tmp_path)
    try:
        run = await store.create_run()
        await store.record_node(run.id, "a", status="completed", outputs={"o": 1})
        assert (await store.node_executions(run.id))[0].outputs == {"o": 1}
    finally:
        await store.close()
