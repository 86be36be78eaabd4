"""Embedder: embed each chunk's text; progress after every batch."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import DataValue, Event, ExecutionResult, FlowContext


class EmbedderExecutor:
    node_type = "embedder"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> Any:
        import asyncio

        from nodeloom.knowledge import KnowledgeError
        from nodeloom.knowledge.runtime import chunks_from, embedder_for

        try:
            chunks, _, _ = chunks_from(inputs["input"].value, "input")
            embedder = embedder_for(data, context)
        except (ValueError, KnowledgeError) as exc:
            raise NodeError(
                f"node '{context.node_name}': {exc}",
                code=getattr(exc, "code", "invalid_input"),
                retryable=False,
            ) from None
        queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
        task = asyncio.create_task(
            embedder.embed([c.text for c in chunks], progress=lambda d, t: queue.put_nowait((d, t)))
        )
        while not task.done() or not queue.empty():
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                done, total = getter.result()
                yield Event("progress", {"embedded": done, "of": total})
            else:
                getter.cancel()
        try:
            vectors = task.result()
        except KnowledgeError as exc:
            raise NodeError(f"node '{context.node_name}': {exc}", code=exc.code) from None
        finally:
            embedder.close()
        yield ExecutionResult(
            {
                "output": {
                    "model": embedder.reference,
                    "dimension": embedder.dimension,
                    "chunks": [
                        {**c.to_json(), "embedding": v}
                        for c, v in zip(chunks, vectors, strict=True)
                    ],
                    "model_calls": embedder.model_calls,
                }
            }
        )


executor = EmbedderExecutor()
