"""The knowledge nodes on Postgres with pgvector: NODELOOM_KNOWLEDGE_URL selects it, an
ingest flow writes there and a search flow reads it back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import nodeloom
from nodeloom.knowledge import open_store
from nodeloom.testing.builders import chain, node
from nodeloom.testing.documents import write_documents
from nodeloom.testing.stores import create_database, drop_database
from nodeloom.testing.stores.pgvector import throwaway_pgvector

pytestmark = pytest.mark.slow  # starts its own Postgres cluster (~8 s)


@pytest.fixture(scope="module")
def pgvector() -> Iterator[str]:
    with throwaway_pgvector() as server:
        yield server


async def test_a_flow_ingests_into_and_searches_postgres(
    pgvector: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = await create_database(pgvector)
    monkeypatch.setenv("NODELOOM_KNOWLEDGE_URL", url)
    try:
        paths = write_documents(tmp_path / "docs")
        ingest = chain(
            node("load", "document-loader", sources=[str(tmp_path / "docs")]),
            node("chunk", "text-chunker", chunk_size=48),
            node("embed", "embedder"),
            node("write", "knowledge-write", collection="facts", name="Write"),
        )
        async with nodeloom.load(ingest) as flow:
            written = await flow.run({})
        assert written.status is nodeloom.RunStatus.COMPLETED, written.error
        ask = chain(
            node("start", "chat-start"),
            node("search", "knowledge-search", collection="facts", name="Search"),
        )
        async with nodeloom.load(ask) as flow:
            result = await flow.run("Which satellite photographs glaciers?")
        top = result.outputs["Search"]["output"]["hits"][0]
        assert top["metadata"]["source"] == str(paths["json"])
        store = await open_store()
        try:
            assert store.url == url
            (info,) = await store.list_collections()
            assert info.chunks == written.outputs["Write"]["output"]["added"]
        finally:
            await store.close()
    finally:
        await drop_database(url)
