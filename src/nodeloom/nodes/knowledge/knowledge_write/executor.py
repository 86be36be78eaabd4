"""Knowledge Write: chunks (embedded upstream or here) -> write_chunks on the run's store."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import DataValue, Event, ExecutionResult, FlowContext


class KnowledgeWriteExecutor:
    node_type = "knowledge-write"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> Any:
        from nodeloom.knowledge import KnowledgeError, write_chunks
        from nodeloom.knowledge.embedding import Embedder, parse_model
        from nodeloom.knowledge.runtime import (
            KnownVectors,
            chunks_from,
            embedder_for,
            store_for,
        )

        where = f"node '{context.node_name}'"
        collection = str(data.get("collection") or "").strip()
        if not collection:
            raise NodeError(
                f"{where}: parameter 'collection' is empty; name the collection, e.g. 'docs'",
                code="missing_parameter",
                retryable=False,
            )
        progress: list[tuple[int, int]] = []
        try:
            chunks, model, vectors = chunks_from(inputs["input"].value, "input")
            if vectors:
                base = Embedder(parse_model(model or data.get("model"), data.get("base_url")))
                embedder: Any = KnownVectors(base, vectors)
            else:
                embedder = embedder_for(data, context)
            store = await store_for(context)
            try:
                counts = await write_chunks(
                    store,
                    collection,
                    chunks,
                    embedder,
                    mode=data.get("mode") or "upsert",
                    progress=lambda d, t: progress.append((d, t)),
                )
            finally:
                await store.close()
                embedder.close()
        except (ValueError, KnowledgeError) as exc:
            raise NodeError(
                f"{where}: {exc}", code=getattr(exc, "code", "invalid_input"), retryable=False
            ) from None
        if progress:
            yield Event("progress", {"embedded": progress[-1][0], "of": progress[-1][1]})
        yield ExecutionResult(
            {"output": {"collection": collection, **counts, "chunks": len(chunks)}}
        )


executor = KnowledgeWriteExecutor()
