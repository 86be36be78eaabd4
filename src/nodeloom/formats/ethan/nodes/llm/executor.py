"""Ethan LLM: one chat completion through nodeloom.models.

Phase 1 checks the model (a missing key or base URL fails the run before any call).
The messages come in the template's order: system, then `messages`, then assistant, then
user, so the user's turn is last. Retries are the node's (native `retry`): the provider
client's own retries are turned off so `retry.max_attempts` counts every call.

`result`:
    text      the reply
    json      the reply parsed, if it is a JSON object or list; otherwise the completion as JSON
              ({"model", "choices": [{"message": {"role", "content"}}], "usage"}), so the
              seed's `result.json['usage']['prompt_tokens']` works on a text reply
    usage     {"prompt_tokens", "completion_tokens", "total_tokens"} (always)
    model     the model reference
    status    200; items (the reply if it is a JSON list); result (the text); error null
"""

from __future__ import annotations

import json
from typing import Any

from nodeloom.formats.ethan import frames, providers, runtime, templates
from nodeloom.models import ModelSpec, check_configured, create_model, parse_reference
from nodeloom.models.llm import usage_of
from nodeloom.plugins.contract import BuildContext, DataValue, ExecutionResult, FlowContext


def model_spec(spec: dict[str, Any]) -> ModelSpec:
    """The node's model, with `{{env.NAME}}` placeholders read from the environment."""
    model = spec["model"]
    where = f"{runtime.describe(spec)}: meta.defaults.llm"
    parsed = parse_reference(model["model"], where=where)
    return ModelSpec(
        parsed.provider,
        parsed.model,
        base_url=providers.resolve_env(model.get("base_url"), f"{where} base_url"),
        api_key=providers.resolve_env(model.get("api_key"), f"{where} api_key"),
        temperature=model.get("temperature"),
        max_tokens=model.get("max_tokens"),
    )


class EthanLlmExecutor:
    node_type = "ethan-llm"

    def build(self, data: dict[str, Any], context: BuildContext) -> None:
        spec = runtime.spec_of(data)
        try:
            check_configured(model_spec(spec), where=runtime.describe(spec))
        except ValueError as exc:  # an {{env.NAME}} that is not set
            raise runtime.failure(spec, exc) from exc

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        spec = runtime.spec_of(data)
        frame = frames.find(context)
        try:
            runtime.on_time(frame, spec)
            messages = _messages(spec, runtime.scope(frame))
            model_of = model_spec(spec)
            model = create_model(
                model_of, where=runtime.describe(spec), http_client=context.http_client()
            )
            if hasattr(model, "max_retries"):
                model.max_retries = 0  # the node's retry policy counts every attempt
            response = await runtime.bounded(
                frame, model.aresponse(messages=messages), runtime.describe(spec)
            )
            usage = usage_of(response)
            result = _result(getattr(response, "content", None), usage, model_of.reference)
            return runtime.finish(spec, frame, context, result, usage=usage)
        except Exception as exc:
            raise runtime.failure(spec, exc) from exc


def _messages(spec: dict[str, Any], names: dict[str, Any]) -> list[Any]:
    from agno.models.message import Message

    messages = []
    for message in spec.get("messages") or []:
        content = templates.render(message["content"], names)
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        messages.append(Message(role=message["role"], content=content))
    return messages


def _result(content: Any, usage: dict[str, int], model: str) -> dict[str, Any]:
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    parsed = _parsed(text)
    envelope = {
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": usage,
    }
    return {
        "status": 200,
        "text": text,
        "json": envelope if parsed is _NOT_JSON else parsed,
        "items": parsed if isinstance(parsed, list) else None,
        "result": text,
        "error": None,
        "usage": usage,
        "model": model,
    }


_NOT_JSON = object()


def _parsed(text: str) -> Any:
    """The reply as a JSON object or list (code fences allowed), else _NOT_JSON."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0].strip()
    if not stripped.startswith(("{", "[")):
        return _NOT_JSON
    try:
        value = json.loads(stripped)
    except ValueError:
        return _NOT_JSON
    return value if isinstance(value, dict | list) else _NOT_JSON


executor = EthanLlmExecutor()
