"""Knowledge Base: build one async tool, `search_<collection>(query)`, for the agent.

The tool opens the run's knowledge store per call and returns the hits as numbered
passages (see nodeloom.knowledge.retrieval.tool_result); the Agent node reads the first
line back to list the hits in its answer.
"""

from __future__ import annotations

import re
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import BuildContext, ToolsResult


def tool_name(collection: str) -> str:
    return "search_" + (
        re.sub(r"[^0-9a-zA-Z_]+", "_", collection).strip("_").lower() or "knowledge"
    )


class KnowledgeBaseExecutor:
    node_type = "knowledge-base"

    def build(self, data: dict[str, Any], context: BuildContext) -> ToolsResult:
        collection = str(data.get("collection") or "").strip()
        if not collection:
            raise NodeError(
                f"node '{context.node_name}': parameter 'collection' is empty; name the "
                "collection the agent searches",
                code="missing_parameter",
                retryable=False,
            )
        top_k = int(data.get("top_k") or 5)
        mode = data.get("mode") or "hybrid"
        services = context.services

        async def search_knowledge(query: str) -> str:
            from nodeloom.knowledge import KnowledgeError, search
            from nodeloom.knowledge.retrieval import tool_result
            from nodeloom.knowledge.runtime import search_embedder, store_for

            store = await store_for(services)
            embedder = None
            try:
                if mode != "keyword":
                    embedder = await search_embedder(data, services, store, collection)
                result = await search(store, collection, query, embedder, top_k=top_k, mode=mode)
            except KnowledgeError as exc:
                return f"The search failed: {exc}"
            finally:
                await store.close()
                if embedder is not None:
                    embedder.close()
            return tool_result(result)

        name = tool_name(collection)
        about = data.get("description") or f"the knowledge collection '{collection}'"
        search_knowledge.__name__ = search_knowledge.__qualname__ = name
        search_knowledge.__doc__ = (
            f"Search {about} and return the most relevant passages, numbered [1], [2], ...\n\n"
            "Args:\n    query: what to look for, in your own words.\n"
        )
        return ToolsResult(
            tools=[search_knowledge], names=[name], source=f"knowledge-base: {collection}"
        )


executor = KnowledgeBaseExecutor()
