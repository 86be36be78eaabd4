from collections.abc import AsyncIterator, Mapping
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.models.llm import prompt_from, usage_of
from nodeloom.nodes.core.agent.compile import compile_agent
from nodeloom.nodes.core.agent.events import map_event
from nodeloom.observability import AgentModelCalls
from nodeloom.plugins.contract import (
    AgentResult,
    BuildContext,
    DataValue,
    Event,
    ExecutionResult,
    FlowContext,
    calling_node,
)

# Parameters that may differ between the build and the flow (wires, flow expressions).
_HYBRID = ("model", "instructions", "temperature")


class AgentExecutor:
    node_type = "agent"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: the first words of the agent's response."""
        value = outputs.get("output")
        text = value.get("response") if isinstance(value, dict) else None
        if not isinstance(text, str) or not text.strip():
            return None
        words = text.split()
        return " ".join(words[:12]) + (" …" if len(words) > 12 else "")

    def build(self, data: dict[str, Any], context: BuildContext) -> AgentResult | None:
        """Phase 1: compile the cluster. A model known only during the flow is compiled then."""
        if "model" in context.deferred:
            return None
        return compile_agent(data, context)

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        compiled = context.structure
        build = context.build_context
        if build is None:
            raise NodeError(
                "the agent was not built before the flow", code="executor_contract", retryable=False
            )
        if not isinstance(compiled, AgentResult) or any(
            data.get(key) != build.data.get(key) for key in _HYBRID
        ):
            compiled = compile_agent(data, build)
        prompt = prompt_from(data, inputs, what="the agent has nothing to answer")
        agent = compiled.agent
        output = None
        sources: list[dict[str, Any]] = []
        calls = AgentModelCalls()  # model-call spans, when tracing is on
        calling_node.set(context)  # the run and node a Flow Tool's child run belongs to
        try:
            async for item in agent.arun(
                prompt,
                stream=True,
                stream_events=True,
                yield_run_output=True,
                session_id=context.chat_id or context.run_id,
            ):
                calls.see(item)
                kind = getattr(item, "event", "")
                if kind in ("RunError", "TeamRunError"):
                    raise NodeError(
                        f"the agent failed: {getattr(item, 'content', '')}", code="agent_error"
                    )
                if not kind and hasattr(item, "content"):
                    output = item  # the final RunOutput / TeamRunOutput
                    continue
                event = map_event(item, context.node_name)
                if event is not None:
                    if event.data and "hits" in event.data:
                        sources.extend(event.data["hits"])
                    yield event
        finally:
            calls.close()
        if output is None:
            raise NodeError("the agent ended without a result", code="agent_error")
        usage = usage_of(output)
        content = output.content
        response = content if isinstance(content, str) else str(content or "")
        answer: dict[str, Any] = {
            "response": response,
            "model": compiled.summary.get("model"),
            "tokens_used": usage,
        }
        if sources:  # the knowledge hits its searches returned (Knowledge Base tools)
            answer["sources"] = sources
        yield ExecutionResult({"output": answer}, usage=usage)


executor = AgentExecutor()
