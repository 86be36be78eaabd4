"""The embedded knowledge store: one SQLite file, sqlite-vec for vectors, FTS5 for words.

The standard library's sqlite3 here cannot load extensions, so the file is opened with
`sqlean` (a SQLite build that can) and sqlite-vec is loaded into it. Each collection has
its own vec0 table (`kv_<id>`, cosine distance, the collection's dimension: exact KNN)
beside the shared tables `kchunks` (text, metadata, hash) and `kfts` (FTS5, porter
stemming, bm25). Calls run in a worker thread, one at a time.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from nodeloom.knowledge.errors import CollectionNotFoundError, KnowledgeStoreError
from nodeloom.knowledge.records import CollectionInfo, Hit, StoredChunk, keyword_terms

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kcollections (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, model TEXT NOT NULL,
    dimension INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS kchunks (
    rowid INTEGER PRIMARY KEY, collection_id INTEGER NOT NULL, id TEXT NOT NULL,
    source TEXT NOT NULL, content_hash TEXT NOT NULL, text TEXT NOT NULL,
    metadata TEXT NOT NULL, UNIQUE (collection_id, id));
CREATE INDEX IF NOT EXISTS kchunks_source ON kchunks (collection_id, source);
CREATE INDEX IF NOT EXISTS kchunks_hash ON kchunks (collection_id, content_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS kfts USING fts5(text, tokenize='porter unicode61');
"""


def _connect(path: str) -> Any:
    try:
        import sqlean
        import sqlite_vec
    except ImportError as exc:
        raise KnowledgeStoreError(
            f"the SQLite knowledge store needs {exc.name}: pip install "
            "'sqlean-py==3.50.4.5' 'sqlite-vec==0.1.9' (nodeloom depends on both)"
        ) from None
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlean.connect(path, check_same_thread=False, isolation_level=None)
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA busy_timeout=10000")
    db.executescript(_SCHEMA)
    return db


def _where(where: dict[str, Any] | None) -> tuple[str, list[Any]]:
    """A metadata equality filter as SQL on kchunks `c` (keys are bound, not spliced)."""
    if not where:
        return "", []
    clauses, values = [], []
    for key, value in sorted(where.items()):
        clauses.append("json_extract(c.metadata, ?) = ?")
        values.extend(
            [f'$."{key}"', json.dumps(value) if isinstance(value, list | dict) else value]
        )
    return " AND " + " AND ".join(clauses), values


class SqliteKnowledgeStore:
    def __init__(self, db: Any, path: str) -> None:
        self._db = db
        self._lock = threading.Lock()
        self.url = f"sqlite:///{path}"

    @classmethod
    async def open(cls, path: str) -> SqliteKnowledgeStore:
        return cls(await asyncio.to_thread(_connect, path), path)

    async def _run(self, function: Any, *args: Any) -> Any:
        def call() -> Any:
            with self._lock:
                return function(*args)

        return await asyncio.to_thread(call)

    # -- collections ---------------------------------------------------------------------

    def _info(self, row: tuple[Any, ...]) -> CollectionInfo:
        cid, name, model, dimension = row
        chunks, sources = self._db.execute(
            "SELECT count(*), count(DISTINCT source) FROM kchunks WHERE collection_id=?", [cid]
        ).fetchone()
        return CollectionInfo(name, model, dimension, chunks, sources)

    def _id(self, name: str) -> tuple[int, int]:
        row = self._db.execute(
            "SELECT id, dimension FROM kcollections WHERE name=?", [name]
        ).fetchone()
        if row is None:
            raise CollectionNotFoundError(f"no knowledge collection {name!r}")
        return row

    async def list_collections(self) -> list[CollectionInfo]:
        def run() -> list[CollectionInfo]:
            rows = self._db.execute(
                "SELECT id, name, model, dimension FROM kcollections ORDER BY name"
            ).fetchall()
            return [self._info(row) for row in rows]

        return await self._run(run)

    async def get_collection(self, name: str) -> CollectionInfo | None:
        def run() -> CollectionInfo | None:
            row = self._db.execute(
                "SELECT id, name, model, dimension FROM kcollections WHERE name=?", [name]
            ).fetchone()
            return self._info(row) if row else None

        return await self._run(run)

    async def create_collection(self, name: str, model: str, dimension: int) -> CollectionInfo:
        def run() -> CollectionInfo:
            with self._db:
                self._db.execute("BEGIN")
                cursor = self._db.execute(
                    "INSERT INTO kcollections (name, model, dimension) VALUES (?, ?, ?)",
                    [name, model, int(dimension)],
                )
                self._db.execute(
                    f"CREATE VIRTUAL TABLE kv_{int(cursor.lastrowid)} USING vec0("
                    f"embedding float[{int(dimension)}] distance_metric=cosine)"
                )
            return CollectionInfo(name, model, int(dimension))

        return await self._run(run)

    async def drop_collection(self, name: str) -> bool:
        def run() -> bool:
            row = self._db.execute("SELECT id FROM kcollections WHERE name=?", [name]).fetchone()
            if row is None:
                return False
            cid = int(row[0])
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute(
                    "DELETE FROM kfts WHERE rowid IN "
                    "(SELECT rowid FROM kchunks WHERE collection_id=?)",
                    [cid],
                )
                self._db.execute("DELETE FROM kchunks WHERE collection_id=?", [cid])
                self._db.execute(f"DROP TABLE IF EXISTS kv_{cid}")
                self._db.execute("DELETE FROM kcollections WHERE id=?", [cid])
            return True

        return await self._run(run)

    # -- chunks --------------------------------------------------------------------------

    async def existing(self, collection: str, ids: list[str]) -> dict[str, str]:
        def run() -> dict[str, str]:
            cid, _ = self._id(collection)
            found: dict[str, str] = {}
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                rows = self._db.execute(
                    f"SELECT id, content_hash FROM kchunks WHERE collection_id=? "
                    f"AND id IN ({','.join('?' * len(part))})",
                    [cid, *part],
                ).fetchall()
                found.update(rows)
            return found

        return await self._run(run)

    async def known_hashes(self, collection: str, hashes: list[str]) -> set[str]:
        def run() -> set[str]:
            cid, _ = self._id(collection)
            found: set[str] = set()
            for start in range(0, len(hashes), 500):
                part = hashes[start : start + 500]
                rows = self._db.execute(
                    f"SELECT content_hash FROM kchunks WHERE collection_id=? "
                    f"AND content_hash IN ({','.join('?' * len(part))})",
                    [cid, *part],
                ).fetchall()
                found.update(row[0] for row in rows)
            return found

        return await self._run(run)

    async def ids_of_sources(self, collection: str, sources: list[str]) -> set[str]:
        def run() -> set[str]:
            cid, _ = self._id(collection)
            found: set[str] = set()
            for source in sources:
                rows = self._db.execute(
                    "SELECT id FROM kchunks WHERE collection_id=? AND source=?", [cid, source]
                ).fetchall()
                found.update(row[0] for row in rows)
            return found

        return await self._run(run)

    async def upsert(self, collection: str, chunks: list[StoredChunk]) -> None:
        import sqlite_vec

        def run() -> None:
            cid, _ = self._id(collection)
            with self._db:
                self._db.execute("BEGIN")
                for chunk in chunks:
                    self._delete_ids(cid, [chunk.id])
                    cursor = self._db.execute(
                        "INSERT INTO kchunks (collection_id, id, source, content_hash, text, "
                        "metadata) VALUES (?, ?, ?, ?, ?, ?)",
                        [
                            cid,
                            chunk.id,
                            chunk.source,
                            chunk.content_hash,
                            chunk.text,
                            json.dumps(chunk.metadata, sort_keys=True),
                        ],
                    )
                    rowid = cursor.lastrowid
                    self._db.execute(
                        "INSERT INTO kfts (rowid, text) VALUES (?, ?)", [rowid, chunk.text]
                    )
                    self._db.execute(
                        f"INSERT INTO kv_{cid} (rowid, embedding) VALUES (?, ?)",
                        [rowid, sqlite_vec.serialize_float32(chunk.embedding)],
                    )

        await self._run(run)

    def _delete_ids(self, cid: int, ids: list[str]) -> None:
        for identifier in ids:
            row = self._db.execute(
                "SELECT rowid FROM kchunks WHERE collection_id=? AND id=?", [cid, identifier]
            ).fetchone()
            if row is None:
                continue
            self._db.execute("DELETE FROM kfts WHERE rowid=?", [row[0]])
            self._db.execute(f"DELETE FROM kv_{cid} WHERE rowid=?", [row[0]])
            self._db.execute("DELETE FROM kchunks WHERE rowid=?", [row[0]])

    async def delete(self, collection: str, ids: list[str]) -> None:
        def run() -> None:
            cid, _ = self._id(collection)
            with self._db:
                self._db.execute("BEGIN")
                self._delete_ids(cid, ids)

        await self._run(run)

    # -- search --------------------------------------------------------------------------

    async def vector_search(
        self, collection: str, vector: list[float], k: int, where: dict[str, Any] | None
    ) -> list[Hit]:
        import sqlite_vec

        def run() -> list[Hit]:
            cid, _ = self._id(collection)
            blob = sqlite_vec.serialize_float32(vector)
            clause, values = _where(where)
            if clause:  # exact scan over the filtered rows
                sql = (
                    f"SELECT c.id, c.text, c.metadata, vec_distance_cosine(v.embedding, ?) AS d "
                    f"FROM kchunks c JOIN kv_{cid} v ON v.rowid = c.rowid "
                    f"WHERE c.collection_id = ?{clause} ORDER BY d, c.id LIMIT ?"
                )
                rows = self._db.execute(sql, [blob, cid, *values, k]).fetchall()
            else:
                sql = (
                    f"WITH knn AS (SELECT rowid, distance FROM kv_{cid} "
                    f"WHERE embedding MATCH ? AND k = ?) "
                    f"SELECT c.id, c.text, c.metadata, knn.distance FROM knn "
                    f"JOIN kchunks c ON c.rowid = knn.rowid ORDER BY knn.distance, c.id"
                )
                rows = self._db.execute(sql, [blob, k]).fetchall()
            return [Hit(i, t, round(1.0 - float(d), 6), json.loads(m)) for i, t, m, d in rows]

        return await self._run(run)

    async def keyword_search(
        self, collection: str, query: str, k: int, where: dict[str, Any] | None
    ) -> list[Hit]:
        terms = keyword_terms(query)
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)

        def run() -> list[Hit]:
            cid, _ = self._id(collection)
            clause, values = _where(where)
            sql = (
                "SELECT c.id, c.text, c.metadata, bm25(kfts) AS rank FROM kfts "
                "JOIN kchunks c ON c.rowid = kfts.rowid "
                f"WHERE kfts MATCH ? AND c.collection_id = ?{clause} ORDER BY rank, c.id LIMIT ?"
            )
            rows = self._db.execute(sql, [match, cid, *values, k]).fetchall()
            return [Hit(i, t, round(-float(r), 6), json.loads(m)) for i, t, m, r in rows]

        return await self._run(run)

    async def close(self) -> None:
        await self._run(self._db.close)
