"""Embedding models by reference, batched, cached by content hash.

    embedder = open_embedder("local:all-minilm-l6-v2")     # the default; offline
    vectors = await embedder.embed(["text", ...], progress=callback)

References: `local:all-minilm-l6-v2`; `openai:<model>` (OPENAI_API_KEY, OPENAI_BASE_URL);
`ollama:<model>` (OLLAMA_HOST, default http://localhost:11434); `openai-compatible:<model>`
with a `base_url` (or OPENAI_BASE_URL). Remote servers are called at `<base>/embeddings`
with the OpenAI request shape.

With a cache (`EmbeddingCache`, a SQLite file in the data directory), a text embedded
before by the same model is not sent to the model again: re-ingesting unchanged text
costs a lookup.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodeloom.knowledge import local_model
from nodeloom.knowledge.errors import EmbeddingError

DEFAULT_MODEL = f"local:{local_model.NAME}"
PROVIDERS = ("local", "openai", "ollama", "openai-compatible")
Progress = Callable[[int, int], Awaitable[None] | None]  # (done, total)


@dataclass(frozen=True, slots=True)
class ModelRef:
    provider: str
    name: str
    base_url: str | None = None

    @property
    def reference(self) -> str:
        return f"{self.provider}:{self.name}"


def parse_model(value: Any, base_url: str | None = None) -> ModelRef:
    """A ModelRef from `provider:name` (a bare name means `local:`); EmbeddingError
    naming the valid providers otherwise."""
    if value is None or value == "":
        value = DEFAULT_MODEL
    if not isinstance(value, str):
        raise EmbeddingError(f"an embedding model is a string like {DEFAULT_MODEL!r}")
    provider, _, name = value.partition(":")
    if not name:
        provider, name = "local", provider
    if provider not in PROVIDERS:
        raise EmbeddingError(
            f"unknown embedding provider {provider!r} in {value!r}; use one of "
            f"{', '.join(PROVIDERS)} (e.g. {DEFAULT_MODEL!r}, 'openai:text-embedding-3-small')"
        )
    if provider == "local" and name != local_model.NAME:
        raise EmbeddingError(
            f"no local embedding model {name!r}; the local model is {local_model.NAME!r}"
        )
    if provider == "openai-compatible" and not (base_url or os.environ.get("OPENAI_BASE_URL")):
        raise EmbeddingError(
            f"{value!r} needs a base_url (the server's OpenAI-compatible /v1 address)"
        )
    return ModelRef(provider, name, base_url)


class EmbeddingCache:
    """(model, sha256 of text) -> vector, in a SQLite file. Thread-safe."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, hash TEXT NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )

    def get(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        import numpy as np

        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(hashes), 500):
                part = list(hashes[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model=? AND hash IN ({marks})",
                    [model, *part],
                ).fetchall()
                for digest, blob in rows:
                    found[digest] = np.frombuffer(blob, dtype=np.float32).tolist()
        return found

    def put(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        import numpy as np

        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items],
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Embedder:
    """One model: `embed(texts)` in batches, through the cache when there is one.
    `model_calls` counts the texts actually sent to the model (tests and progress use it)."""

    def __init__(
        self,
        ref: ModelRef,
        *,
        cache: EmbeddingCache | None = None,
        batch_size: int = 32,
        http_client: Any = None,
        api_key: str | None = None,
    ) -> None:
        self.ref = ref
        self.cache = cache
        self.batch_size = batch_size
        self.http_client = http_client
        self.api_key = api_key
        self.model_calls = 0
        self.dimension: int | None = local_model.DIMENSION if ref.provider == "local" else None

    @property
    def reference(self) -> str:
        return self.ref.reference

    def close(self) -> None:
        """Close the cache's file (the embedder still works, uncached)."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` for chunk sizes (the local tokenizer stands in for remote
        models, whose tokenizers are not on this machine)."""
        return len(local_model.tokenizer().encode(text, add_special_tokens=False).ids)

    async def embed(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> list[list[float]]:
        hashes = [content_hash(t) for t in texts]
        known: dict[str, list[float]] = {}
        if self.cache is not None:
            known = await asyncio.to_thread(self.cache.get, self.reference, sorted(set(hashes)))
        missing: dict[str, str] = {}
        for digest, text in zip(hashes, texts, strict=True):
            if digest not in known:
                missing.setdefault(digest, text)
        done = len(texts) - sum(1 for h in hashes if h in missing)
        await _report(progress, done, len(texts))
        pending = list(missing.items())
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            vectors = await self._embed_batch([text for _, text in batch])
            self.model_calls += len(batch)
            fresh = [(digest, vector) for (digest, _), vector in zip(batch, vectors, strict=True)]
            known.update(fresh)
            if self.cache is not None:
                await asyncio.to_thread(self.cache.put, self.reference, fresh)
            done += sum(hashes.count(digest) for digest, _ in batch)
            await _report(progress, done, len(texts))
        result = [known[h] for h in hashes]
        if result and self.dimension is None:
            self.dimension = len(result[0])
        return result

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        if self.ref.provider == "local":
            local_model.import_runtime()  # on this thread (see import_runtime)
            return await asyncio.to_thread(local_model.embed, texts)
        return await self._remote(texts)

    def _endpoint(self) -> tuple[str, dict[str, str]]:
        ref = self.ref
        headers: dict[str, str] = {}
        if ref.provider == "ollama":
            host = ref.base_url or os.environ.get("OLLAMA_HOST") or "http://localhost:11434"
            base = host if host.rstrip("/").endswith("/v1") else host.rstrip("/") + "/v1"
        elif ref.provider == "openai":
            base = ref.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        else:
            base = ref.base_url or os.environ.get("OPENAI_BASE_URL") or ""
        key = self.api_key or (
            os.environ.get("OPENAI_API_KEY") if ref.provider != "ollama" else None
        )
        if ref.provider == "openai" and not key:
            raise EmbeddingError(
                f"{ref.reference} needs an API key: set OPENAI_API_KEY (or use the offline "
                f"default {DEFAULT_MODEL!r})"
            )
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return base.rstrip("/") + "/embeddings", headers

    async def _remote(self, texts: list[str]) -> list[list[float]]:
        import httpx

        url, headers = self._endpoint()
        client = self.http_client or httpx.AsyncClient(timeout=httpx.Timeout(120, connect=10))
        try:
            response = await client.post(
                url, json={"model": self.ref.name, "input": texts}, headers=headers
            )
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"{self.reference}: cannot reach {url}: {exc}") from None
        finally:
            if self.http_client is None:
                await client.aclose()
        if response.status_code >= 400:
            raise EmbeddingError(
                f"{self.reference}: {url} answered HTTP {response.status_code}: "
                f"{response.text[:300]}"
            )
        try:
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            vectors = [list(map(float, row["embedding"])) for row in rows]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(
                f"{self.reference}: {url} did not answer in the OpenAI embeddings shape ({exc!r})"
            ) from None
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.reference}: sent {len(texts)} texts, received {len(vectors)} vectors"
            )
        return vectors


async def _report(progress: Progress | None, done: int, total: int) -> None:
    if progress is None:
        return
    outcome = progress(done, total)
    if outcome is not None:
        await outcome


def open_embedder(
    model: Any = None,
    *,
    base_url: str | None = None,
    cache_dir: Path | None = None,
    **options: Any,
) -> Embedder:
    """An Embedder for a reference; with `cache_dir`, its cache is `embeddings.sqlite` there."""
    cache = EmbeddingCache(cache_dir / "embeddings.sqlite") if cache_dir is not None else None
    return Embedder(parse_model(model, base_url), cache=cache, **options)
