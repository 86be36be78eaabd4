"""The local model embeds offline; a cache makes re-embedding unchanged text free;
remote models are called over real HTTP in the OpenAI embeddings shape."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from nodeloom.knowledge import EmbeddingError, open_embedder, parse_model


async def test_the_local_model_gives_unit_vectors_that_rank_paraphrases_close(
    tmp_path: Path,
) -> None:
    embedder = open_embedder()
    a, b, c = np.array(
        await embedder.embed(
            ["The cat sits on the mat.", "A feline rests on a rug.", "Stock prices fell today."]
        )
    )
    assert a.shape == (384,)
    assert abs(np.linalg.norm(a) - 1) < 1e-4
    assert a @ b > 0.4 > a @ c


async def test_the_cache_embeds_unchanged_text_once(tmp_path: Path) -> None:
    first = open_embedder(cache_dir=tmp_path)
    vectors = await first.embed(["alpha text", "beta text", "alpha text"])
    assert first.model_calls == 2
    again = open_embedder(cache_dir=tmp_path)
    progress: list[tuple[int, int]] = []
    assert (
        await again.embed(
            ["alpha text", "beta text"], progress=lambda d, t: progress.append((d, t))
        )
        == vectors[:2]
    )
    assert again.model_calls == 0
    assert progress == [(2, 2)]


def test_a_bad_model_reference_names_the_valid_providers() -> None:
    with pytest.raises(EmbeddingError, match="local, openai, ollama, openai-compatible"):
        parse_model("hub:bert")
    with pytest.raises(EmbeddingError, match="the local model is 'all-minilm-l6-v2'"):
        parse_model("local:bge-small")
    assert parse_model(None).reference == "local:all-minilm-l6-v2"


class _Embeddings(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).received.append(
            {"path": self.path, "body": body, "auth": self.headers.get("authorization")}
        )
        data = [
            {"index": i, "embedding": [b / 255 for b in hashlib.sha256(t.encode()).digest()[:8]]}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"data": list(reversed(data))}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Embeddings.received = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_an_openai_compatible_server_is_called_in_batches(embeddings_server: str) -> None:
    embedder = open_embedder(
        "openai-compatible:tiny-embed", base_url=embeddings_server, batch_size=2, api_key="k-1"
    )
    vectors = await embedder.embed(["one", "two", "three"])
    assert len(vectors) == 3 and len(vectors[0]) == 8
    assert vectors[0] == [b / 255 for b in hashlib.sha256(b"one").digest()[:8]]
    assert [r["body"]["input"] for r in _Embeddings.received] == [["one", "two"], ["three"]]
    assert _Embeddings.received[0]["path"] == "/v1/embeddings"
    assert _Embeddings.received[0]["body"]["model"] == "tiny-embed"
    assert _Embeddings.received[0]["auth"] == "Bearer k-1"
    assert embedder.dimension == 8


async def test_openai_without_a_key_says_which_variable_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        await open_embedder("openai:text-embedding-3-small").embed(["x"])
