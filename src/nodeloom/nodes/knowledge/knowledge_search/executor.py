"""Knowledge Search: the library's hybrid search on the run's store."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import DataValue, ExecutionResult, FlowContext


class KnowledgeSearchExecutor:
    node_type = "knowledge-search"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        from nodeloom.knowledge import KnowledgeError, search
        from nodeloom.knowledge.runtime import search_embedder, store_for, text_of

        where = f"node '{context.node_name}'"
        incoming = inputs.get("input")
        query = data.get("query") or text_of(incoming.value if incoming else None)
        if not isinstance(query, str) or not query.strip():
            raise NodeError(
                f"{where}: no query: parameter 'query' is empty and the input has no text "
                "(message, text or query); set `query` or wire a Chat Start",
                code="missing_parameter",
                retryable=False,
            )
        mode = data.get("mode") or "hybrid"
        filter_ = data.get("filter") or None
        if filter_ is not None and not isinstance(filter_, dict):
            raise NodeError(
                f"{where}: parameter 'filter' must be an object of metadata fields; received "
                f"{type(filter_).__name__}",
                code="invalid_parameter",
                retryable=False,
            )
        collection = str(data.get("collection") or "")
        embedder = None
        try:
            store = await store_for(context)
            try:
                if mode != "keyword":
                    embedder = await search_embedder(data, context, store, collection)
                result = await search(
                    store,
                    collection,
                    query,
                    embedder,
                    top_k=int(data.get("top_k") or 5),
                    mode=mode,
                    where=filter_,
                )
            finally:
                await store.close()
                if embedder is not None:
                    embedder.close()
        except (ValueError, KnowledgeError) as exc:
            raise NodeError(
                f"{where}: {exc}", code=getattr(exc, "code", "invalid_parameter"), retryable=False
            ) from None
        return ExecutionResult({"output": result})


executor = KnowledgeSearchExecutor()
