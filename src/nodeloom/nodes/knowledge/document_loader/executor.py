"""Document Loader: gather the sources (parameter and input), load each, report failures."""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins import DataValue, Event, ExecutionResult, FlowContext


def _sources(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, dict):
        for key in ("files", "paths", "sources", "urls"):
            if key in value:
                return _sources(value[key])
        if "$ref" in value or "text" in value:
            return [value]
        for key in ("path", "url"):
            if isinstance(value.get(key), str):
                return [value[key]]
        return []
    if isinstance(value, list | tuple):
        return [item for part in value for item in _sources(part)]
    return [value]


class DocumentLoaderExecutor:
    node_type = "document-loader"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> Any:
        from nodeloom.knowledge import DocumentLoadError, load
        from nodeloom.net import Policy

        incoming = inputs.get("input")
        sources = _sources(data.get("sources")) + _sources(incoming.value if incoming else None)
        if not sources:
            raise NodeError(
                f"node '{context.node_name}': parameter 'sources' is empty and nothing was "
                "wired into `input`; name a path, folder, glob or URL",
                code="invalid_parameter",
                retryable=False,
            )
        policy = Policy(allow_private=bool(data.get("allow_private_network")))
        try:
            report = await load(sources, strict=bool(data.get("strict")), policy=policy)
        except DocumentLoadError as exc:
            raise NodeError(
                f"node '{context.node_name}': {exc}", code=exc.code, retryable=False
            ) from None
        if not report.documents and report.errors:
            first = report.errors[0]
            raise NodeError(
                f"node '{context.node_name}': no source could be read ({len(report.errors)} "
                f"failed); first: {first['message']}",
                code="knowledge_load_failed",
                retryable=False,
                details={"errors": report.errors},
            )
        yield Event(
            "progress",
            {"files": report.files, "documents": len(report.documents), "failed": report.errors},
        )
        outputs: dict[str, Any] = {"output": [d.to_json() for d in report.documents]}
        if report.errors:
            outputs["errors"] = report.errors
        yield ExecutionResult(outputs)


executor = DocumentLoaderExecutor()
