import contextlib
from collections.abc import AsyncIterator
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.formats.workflow.log import log_event
from nodeloom.formats.workflow.nodes.agent.compile import BUILD_PARAMETERS, compile_agent
from nodeloom.formats.workflow.nodes.agent.subagents import CALLS, SubagentCalls
from nodeloom.models.llm import input_text, usage_of
from nodeloom.plugins.contract import (
    AgentResult,
    BuildContext,
    DataValue,
    Event,
    ExecutionResult,
    FlowContext,
)

RESULT_PREVIEW = 2000


class WorkflowAgentExecutor:
    node_type = "workflow-agent"

    def build(self, data: dict[str, Any], context: BuildContext) -> AgentResult | None:
        """Phase 1: compile the agent and its subagent tree before any model is called.
        A parameter known only during the flow compiles it then."""
        if context.deferred & set(BUILD_PARAMETERS):
            return None
        return compile_agent(data, context)

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> AsyncIterator[Event | ExecutionResult]:
        yield log_event("step_start", f"{context.node_name} agent node")
        compiled = context.structure
        build = context.build_context
        if build is None:
            raise NodeError(
                "the agent was not built before the flow", code="executor_contract", retryable=False
            )
        if not isinstance(compiled, AgentResult) or any(
            data.get(key) != build.data.get(key) for key in BUILD_PARAMETERS
        ):
            compiled = compile_agent(data, build)
        prompt = _prompt(data, inputs)
        if not prompt:
            raise NodeError(
                "the agent has nothing to send: its user prompt is empty and so is the previous "
                "output; set the user prompt, or give the run a message (`--input`) or the start "
                "node an initial input",
                code="empty_prompt",
                retryable=False,
            )
        yield log_event("start_prompt", prompt)
        calls = SubagentCalls(root=context.node_id)
        token = CALLS.set(calls)
        output = None
        try:
            async for item in compiled.agent.arun(
                prompt, stream=True, stream_events=True, yield_run_output=True
            ):
                for event in calls.drain():
                    yield event
                kind = getattr(item, "event", "")
                if kind == "RunError":
                    message = str(getattr(item, "content", "") or "the model call failed")
                    yield log_event("llm_error", message)
                    raise NodeError(f"the model call failed: {message}", code="agent_error")
                if not kind and hasattr(item, "content"):
                    output = item  # the final RunOutput
                    continue
                event = _event(kind, item)
                if event is not None:
                    yield event
        except NodeError:
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            yield log_event("llm_error", message)
            raise NodeError(f"the model call failed: {message}", code="agent_error") from exc
        finally:
            with contextlib.suppress(ValueError):  # closed from another context: harmless
                CALLS.reset(token)
        for event in calls.drain():
            yield event
        if output is None:
            yield log_event("llm_error", "the agent ended without a result")
            raise NodeError("the agent ended without a result", code="agent_error")
        reply = _text(output.content)
        yield log_event("llm_response", reply)
        usage = usage_of(output)
        for key, value in calls.usage.items():
            usage[key] = usage.get(key, 0) + value
        yield ExecutionResult({"output": reply}, usage=usage)


def _prompt(data: dict[str, Any], inputs: dict[str, DataValue]) -> str:
    """The user prompt (its `{{ $json }}` already rendered), else the previous output."""
    prompt = data.get("user_prompt")
    if prompt in (None, ""):
        prompt = inputs["input"].value if "input" in inputs else None
    return input_text(prompt) if not isinstance(prompt, str) else prompt


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    return "" if content is None else input_text(content)


def _event(kind: str, item: Any) -> Event | None:
    """The agent's tokens as `progress` `{"token"}`; its tool calls as `agent_event`s."""
    if kind == "RunContent":
        content = getattr(item, "content", None)
        return (
            Event("progress", {"token": content}) if isinstance(content, str) and content else None
        )
    if kind in ("ToolCallStarted", "ToolCallCompleted"):
        tool = getattr(item, "tool", None)
        data: dict[str, Any] = {
            "event": kind,
            "agent": getattr(item, "agent_name", None),
            "tool": getattr(tool, "tool_name", None),
            "arguments": getattr(tool, "tool_args", None) or {},
        }
        if kind == "ToolCallCompleted":
            result = getattr(tool, "result", None)
            text = result if isinstance(result, str) or result is None else str(result)
            data["result"] = text[:RESULT_PREVIEW] if text else text
            data["error"] = bool(getattr(tool, "tool_call_error", False))
        return Event("agent_event", data)
    return None


executor = WorkflowAgentExecutor()
