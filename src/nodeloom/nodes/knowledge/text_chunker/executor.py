"""Text Chunker: the library's chunk_documents over the input documents."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import DataValue, ExecutionResult, FlowContext


class TextChunkerExecutor:
    node_type = "text-chunker"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        from nodeloom.knowledge import Document, chunk_documents, parse_model

        value = inputs["input"].value
        items = value if isinstance(value, list) else [value]
        try:
            documents = [Document.from_json(item) for item in items]
        except ValueError as exc:
            raise NodeError(
                f"node '{context.node_name}': input: {exc}", code="invalid_input", retryable=False
            ) from None
        unit = data.get("unit") or "tokens"
        if unit == "tokens":
            from nodeloom.knowledge.embedding import Embedder

            count = Embedder(parse_model(data.get("model"))).count_tokens
        else:
            count = len
        try:
            chunks = chunk_documents(
                documents,
                strategy=data.get("strategy") or "recursive",
                size=int(data.get("chunk_size") or 256),
                overlap=int(
                    data.get("chunk_overlap") if data.get("chunk_overlap") is not None else 32
                ),
                count=count,
                unit=unit,
            )
        except ValueError as exc:
            raise NodeError(
                f"node '{context.node_name}': {exc}", code="invalid_parameter", retryable=False
            ) from None
        return ExecutionResult({"output": [c.to_json() for c in chunks]})


executor = TextChunkerExecutor()
