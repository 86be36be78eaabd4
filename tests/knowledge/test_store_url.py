"""Which knowledge store is used: an explicit URL, NODELOOM_KNOWLEDGE_URL, the run store's
Postgres, else a SQLite file in the data directory; other schemes are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodeloom.knowledge import KnowledgeStoreError, open_store, store_url


def test_the_default_is_a_sqlite_file_in_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    monkeypatch.delenv("NODELOOM_KNOWLEDGE_URL", raising=False)
    monkeypatch.delenv("NODELOOM_DATABASE_URL", raising=False)
    assert store_url() == f"sqlite:///{data_dir / 'knowledge.db'}"


def test_the_run_stores_postgres_is_followed_and_the_knowledge_url_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NODELOOM_KNOWLEDGE_URL", raising=False)
    monkeypatch.setenv("NODELOOM_DATABASE_URL", "postgresql://u@db:5432/runs")
    assert store_url() == "postgresql://u@db:5432/runs"
    monkeypatch.setenv("NODELOOM_DATABASE_URL", "sqlite:////tmp/runs.db")
    assert store_url().endswith("/knowledge.db")
    monkeypatch.setenv("NODELOOM_KNOWLEDGE_URL", "sqlite:////srv/k.db")
    assert store_url() == "sqlite:////srv/k.db"
    assert store_url("postgresql://x/y") == "postgresql://x/y"


async def test_an_unsupported_scheme_names_the_supported_ones() -> None:
    with pytest.raises(KnowledgeStoreError, match=r"sqlite:///PATH or postgresql://"):
        await open_store("mysql://x/y")


async def test_a_postgres_that_cannot_be_reached_is_a_store_error() -> None:
    with pytest.raises(KnowledgeStoreError, match="cannot reach the knowledge store"):
        await open_store("postgresql://postgres@127.0.0.1:9/none")
