"""The knowledge store on Postgres: pgvector (HNSW, cosine) and a tsvector for words.

Needs the `vector` extension on the server (`CREATE EXTENSION vector`, done here when
the role may). Each collection has its own table `kchunks_<id>` with a `vector(<dim>)`
column, an HNSW index (`vector_cosine_ops`) and a generated `tsvector` column with a GIN
index. Filtered vector searches use pgvector's iterative index scans so a filter does not
starve the result list.
"""

from __future__ import annotations

import json
from typing import Any

from nodeloom.knowledge.errors import CollectionNotFoundError, KnowledgeStoreError
from nodeloom.knowledge.records import CollectionInfo, Hit, StoredChunk, keyword_terms

# HNSW candidates per query (pgvector's default is 40). Measured on 384-dimension vectors
# (benchmarks/knowledge.py, docs/knowledge.md#quality-and-sizing): 300 gives recall@10
# 0.99 against exact search at 100,000 embedding-like vectors; on an isotropic worst case
# at 10,000, 100 gave 0.85, 200 0.95, 400 0.998. NODELOOM_KNOWLEDGE_EF_SEARCH overrides it.
EF_SEARCH = 300


def ef_search(k: int) -> int:
    import os

    configured = os.environ.get("NODELOOM_KNOWLEDGE_EF_SEARCH", "")
    base = int(configured) if configured.isdigit() else EF_SEARCH
    return max(base, int(k))


def _dsn(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return "postgresql://" + rest if scheme != "postgresql" else url


class PostgresKnowledgeStore:
    def __init__(self, pool: Any, url: str) -> None:
        self._pool = pool
        self.url = url

    @classmethod
    async def open(cls, url: str) -> PostgresKnowledgeStore:
        import asyncpg

        try:
            from pgvector.asyncpg import register_vector
        except ImportError:
            raise KnowledgeStoreError(
                "the Postgres knowledge store needs pgvector: pip install 'pgvector==0.5.1'"
            ) from None
        dsn = _dsn(url)
        try:
            first = await asyncpg.connect(dsn)
        except (OSError, asyncpg.PostgresError) as exc:
            raise KnowledgeStoreError(f"cannot reach the knowledge store: {exc}") from None
        try:
            await first.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except asyncpg.PostgresError as exc:
            raise KnowledgeStoreError(
                f"the knowledge store's Postgres has no usable pgvector extension ({exc}); "
                "install pgvector on the server, or ask an administrator to run "
                "CREATE EXTENSION vector"
            ) from None
        finally:
            await first.close()
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, init=register_vector)
        async with pool.acquire() as connection:
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS kcollections (id serial PRIMARY KEY, "
                "name text NOT NULL UNIQUE, model text NOT NULL, dimension int NOT NULL, "
                "created_at timestamptz NOT NULL DEFAULT now())"
            )
        return cls(pool, url)

    async def _collection(self, connection: Any, name: str) -> int:
        cid = await connection.fetchval("SELECT id FROM kcollections WHERE name=$1", name)
        if cid is None:
            raise CollectionNotFoundError(f"no knowledge collection {name!r}")
        return int(cid)

    async def _info(self, connection: Any, row: Any) -> CollectionInfo:
        counts = await connection.fetchrow(
            f"SELECT count(*) AS chunks, count(DISTINCT source) AS sources FROM kchunks_{row['id']}"
        )
        return CollectionInfo(
            row["name"], row["model"], row["dimension"], counts["chunks"], counts["sources"]
        )

    async def list_collections(self) -> list[CollectionInfo]:
        async with self._pool.acquire() as connection:
            rows = await connection.fetch("SELECT * FROM kcollections ORDER BY name")
            return [await self._info(connection, row) for row in rows]

    async def get_collection(self, name: str) -> CollectionInfo | None:
        async with self._pool.acquire() as connection:
            row = await connection.fetchrow("SELECT * FROM kcollections WHERE name=$1", name)
            return await self._info(connection, row) if row else None

    async def create_collection(self, name: str, model: str, dimension: int) -> CollectionInfo:
        dimension = int(dimension)
        async with self._pool.acquire() as connection, connection.transaction():
            cid = int(
                await connection.fetchval(
                    "INSERT INTO kcollections (name, model, dimension) VALUES ($1, $2, $3) "
                    "RETURNING id",
                    name,
                    model,
                    dimension,
                )
            )
            await connection.execute(
                f"CREATE TABLE kchunks_{cid} (id text PRIMARY KEY, source text NOT NULL, "
                f"content_hash text NOT NULL, text text NOT NULL, metadata jsonb NOT NULL, "
                f"embedding vector({dimension}) NOT NULL, "
                f"tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)"
            )
            await connection.execute(
                f"CREATE INDEX kchunks_{cid}_hnsw ON kchunks_{cid} "
                f"USING hnsw (embedding vector_cosine_ops)"
            )
            await connection.execute(
                f"CREATE INDEX kchunks_{cid}_tsv ON kchunks_{cid} USING gin (tsv)"
            )
            await connection.execute(f"CREATE INDEX kchunks_{cid}_source ON kchunks_{cid} (source)")
            await connection.execute(
                f"CREATE INDEX kchunks_{cid}_hash ON kchunks_{cid} (content_hash)"
            )
        return CollectionInfo(name, model, dimension)

    async def drop_collection(self, name: str) -> bool:
        async with self._pool.acquire() as connection, connection.transaction():
            cid = await connection.fetchval(
                "DELETE FROM kcollections WHERE name=$1 RETURNING id", name
            )
            if cid is None:
                return False
            await connection.execute(f"DROP TABLE IF EXISTS kchunks_{int(cid)}")
            return True

    async def existing(self, collection: str, ids: list[str]) -> dict[str, str]:
        async with self._pool.acquire() as connection:
            cid = await self._collection(connection, collection)
            rows = await connection.fetch(
                f"SELECT id, content_hash FROM kchunks_{cid} WHERE id = ANY($1::text[])", ids
            )
            return {row["id"]: row["content_hash"] for row in rows}

    async def known_hashes(self, collection: str, hashes: list[str]) -> set[str]:
        async with self._pool.acquire() as connection:
            cid = await self._collection(connection, collection)
            rows = await connection.fetch(
                f"SELECT DISTINCT content_hash FROM kchunks_{cid} "
                f"WHERE content_hash = ANY($1::text[])",
                hashes,
            )
            return {row["content_hash"] for row in rows}

    async def ids_of_sources(self, collection: str, sources: list[str]) -> set[str]:
        async with self._pool.acquire() as connection:
            cid = await self._collection(connection, collection)
            rows = await connection.fetch(
                f"SELECT id FROM kchunks_{cid} WHERE source = ANY($1::text[])", sources
            )
            return {row["id"] for row in rows}

    async def upsert(self, collection: str, chunks: list[StoredChunk]) -> None:
        import numpy as np

        async with self._pool.acquire() as connection, connection.transaction():
            cid = await self._collection(connection, collection)
            await connection.executemany(
                f"INSERT INTO kchunks_{cid} (id, source, content_hash, text, metadata, embedding) "
                f"VALUES ($1, $2, $3, $4, $5::jsonb, $6) ON CONFLICT (id) DO UPDATE SET "
                f"source=EXCLUDED.source, content_hash=EXCLUDED.content_hash, text=EXCLUDED.text, "
                f"metadata=EXCLUDED.metadata, embedding=EXCLUDED.embedding",
                [
                    (
                        c.id,
                        c.source,
                        c.content_hash,
                        c.text,
                        json.dumps(c.metadata, sort_keys=True),
                        np.asarray(c.embedding, dtype=np.float32),
                    )
                    for c in chunks
                ],
            )

    async def delete(self, collection: str, ids: list[str]) -> None:
        async with self._pool.acquire() as connection:
            cid = await self._collection(connection, collection)
            await connection.execute(f"DELETE FROM kchunks_{cid} WHERE id = ANY($1::text[])", ids)

    async def vector_search(
        self, collection: str, vector: list[float], k: int, where: dict[str, Any] | None
    ) -> list[Hit]:
        import numpy as np

        async with self._pool.acquire() as connection, connection.transaction():
            cid = await self._collection(connection, collection)
            await connection.execute(f"SET LOCAL hnsw.ef_search = {ef_search(k)}")
            if where:
                await connection.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            clause = " WHERE metadata @> $3::jsonb" if where else ""
            arguments: list[Any] = [np.asarray(vector, dtype=np.float32), int(k)]
            if where:
                arguments.append(json.dumps(where))
            rows = await connection.fetch(
                f"SELECT id, text, metadata, embedding <=> $1 AS distance FROM kchunks_{cid}"
                f"{clause} ORDER BY embedding <=> $1, id LIMIT $2",
                *arguments,
            )
        hits = [
            Hit(r["id"], r["text"], round(1.0 - float(r["distance"]), 6), json.loads(r["metadata"]))
            for r in rows
        ]
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))

    async def keyword_search(
        self, collection: str, query: str, k: int, where: dict[str, Any] | None
    ) -> list[Hit]:
        terms = keyword_terms(query)
        if not terms:
            return []
        async with self._pool.acquire() as connection:
            cid = await self._collection(connection, collection)
            clause = " AND metadata @> $3::jsonb" if where else ""
            # Words are OR-ed (a question need not contain every word), stemmed by Postgres;
            # terms are letters and digits only, so joining them with | is a valid to_tsquery text.
            # ts_rank (how many of the words match, how often), not ts_rank_cd: cover density
            # rewards all words close together, which an OR-ed question rarely has (on the
            # labelled questions, MRR 0.94 against 0.89).
            arguments: list[Any] = [" | ".join(terms), int(k)]
            if where:
                arguments.append(json.dumps(where))
            rows = await connection.fetch(
                "SELECT id, text, metadata, ts_rank(tsv, to_tsquery('english', $1)) AS rank "
                f"FROM kchunks_{cid} WHERE tsv @@ to_tsquery('english', $1){clause} "
                "ORDER BY rank DESC, id LIMIT $2",
                *arguments,
            )
        return [
            Hit(r["id"], r["text"], round(float(r["rank"]), 6), json.loads(r["metadata"]))
            for r in rows
        ]

    async def close(self) -> None:
        await self._pool.close()
