from collections.abc import AsyncIterator, Mapping
from typing import Any

from nodeloom.models.llm import (
    build_messages,
    check_parameters,
    prompt_from,
    spec_from_parameters,
    stream_text,
)
from nodeloom.plugins.contract import BuildContext, DataValue, Event, ExecutionResult, FlowContext


class LlmCompletionExecutor:
    node_type = "llm-completion"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: the first words of the completion."""
        value = outputs.get("output")
        text = value.get("text") if isinstance(value, dict) else None
        if not isinstance(text, str) or not text.strip():
            return None
        words = text.split()
        return " ".join(words[:12]) + (" …" if len(words) > 12 else "")

    def build(self, data: dict[str, Any], context: BuildContext) -> None:
        """Phase 1: an unconfigured provider fails the run before any call is made."""
        check_parameters(data, context.deferred, where=f"'{context.node_name}'")

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        where = f"'{context.node_name}'"
        spec = spec_from_parameters(data, where=where)
        prompt = prompt_from(data, inputs)
        parts: list[str] = []
        usage = None
        async for token, final_usage in stream_text(
            spec,
            build_messages(data.get("system"), prompt),
            where=where,
            http_client=context.http_client(),
        ):
            if token:
                parts.append(token)
                yield Event("progress", {"token": token})
            if final_usage is not None:
                usage = final_usage
        yield ExecutionResult(
            {"output": {"text": "".join(parts), "usage": usage or {}, "model": spec.reference}},
            usage=usage,
        )


executor = LlmCompletionExecutor()
