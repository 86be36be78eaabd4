"""Single LLM calls without an agent: the model from a node's parameters, the prompt from
its input, token streaming and usage."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from nodeloom.models.endpoints import check_destination
from nodeloom.models.reference import ModelSpec, parse_reference
from nodeloom.models.resolve import check_configured, create_model, with_overrides
from nodeloom.observability import model_call


def spec_from_parameters(data: Mapping[str, Any], *, where: str) -> ModelSpec:
    """The node's model: its `model` (a reference or a Model Selector's wire) with its
    temperature, max_tokens, base_url and api_key applied."""
    spec = parse_reference(data.get("model"), where=f"{where}: model")
    return with_overrides(
        spec,
        base_url=data.get("base_url"),
        api_key=data.get("api_key"),
        temperature=data.get("temperature"),
        max_tokens=data.get("max_tokens"),
    )


def check_parameters(data: Mapping[str, Any], deferred: frozenset[str], *, where: str) -> None:
    """Phase 1 check: fail before any call if the model cannot be used."""
    if "model" not in deferred:
        spec = spec_from_parameters(data, where=where)
        if "api_key" in deferred:  # known when the node runs ($credentials, $json, ...)
            spec = with_overrides(spec, api_key="(set when the node runs)")
        check_configured(spec, where=where)


def input_text(value: Any) -> str:
    """A spine value as prompt text: a string as is; `text`, `message` or `response` of an
    object; anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "message", "response"):
            if isinstance(value.get(key), str):
                return value[key]
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def prompt_from(
    data: Mapping[str, Any],
    inputs: Mapping[str, Any],
    *,
    key: str = "prompt",
    what: str = "the prompt is empty",
) -> str:
    """The node's `prompt` parameter, else its spine input as text; an empty one is a
    NodeError naming the fix."""
    from nodeloom.errors import NodeError

    text = data.get(key)
    if text in (None, ""):
        value = inputs["input"].value if "input" in inputs else None
        text = input_text(value)
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    if not text:
        raise NodeError(
            f"{what}: set `{key}` or wire text into the input", code="empty_prompt", retryable=False
        )
    return text


def build_messages(system: str | None, prompt: str) -> list[Any]:
    from agno.models.message import Message

    messages = [Message(role="system", content=system)] if system else []
    messages.append(Message(role="user", content=prompt))
    return messages


def usage_of(response: Any) -> dict[str, int]:
    """Token usage of an Agno response or run output, in OpenAI's names."""
    metrics = getattr(response, "response_usage", None) or getattr(response, "metrics", None)
    source = metrics if metrics is not None else response
    prompt = getattr(source, "input_tokens", None) or 0
    completion = getattr(source, "output_tokens", None) or 0
    total = getattr(source, "total_tokens", None) or prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


async def stream_text(
    spec: ModelSpec, messages: list[Any], *, where: str, http_client: Any = None
) -> AsyncIterator[tuple[str, dict[str, int] | None]]:
    """Yield (token, None) as tokens arrive, then ("", usage) once."""
    model = create_model(spec, where=where, http_client=http_client)
    await check_destination(spec, where=where)
    usage: dict[str, int] | None = None
    with model_call(spec.provider, spec.model) as call:
        async for chunk in model.aresponse_stream(messages=messages):
            content = getattr(chunk, "content", None)
            if isinstance(content, str) and content:
                yield content, None
            if getattr(chunk, "response_usage", None) is not None or getattr(
                chunk, "input_tokens", None
            ):
                usage = usage_of(chunk)
        call.usage(usage)
    yield "", usage


async def complete_json(
    spec: ModelSpec,
    messages: list[Any],
    schema: Mapping[str, Any],
    *,
    name: str,
    where: str,
    http_client: Any = None,
) -> tuple[Any, dict[str, int]]:
    """One call whose reply must be JSON valid against `schema`. Returns (value, usage).

    A reply that is not JSON or does not validate raises NodeError `schema_mismatch`
    (retryable: another attempt may well succeed)."""
    import jsonschema

    from nodeloom.errors import NodeError

    model = create_model(spec, where=where, http_client=http_client)
    await check_destination(spec, where=where)
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(schema), "strict": False},
    }
    with model_call(spec.provider, spec.model) as call:
        response = await model.aresponse(messages=messages, response_format=response_format)
        usage = usage_of(response)
        call.usage(usage)
    content = getattr(response, "parsed", None)
    if content is None:
        content = _strip_fences(getattr(response, "content", None) or "")
        try:
            content = json.loads(content)
        except json.JSONDecodeError as exc:
            raise NodeError(
                f"the model's reply is not JSON ({exc.msg}): {content[:200]!r}",
                code="schema_mismatch",
                details={"usage": usage},
            ) from None
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(content),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        listed = "; ".join(
            f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in errors[:3]
        )
        raise NodeError(
            f"the model's reply does not match the schema: {listed}",
            code="schema_mismatch",
            details={"reply": content, "usage": usage},
        )
    return content, usage


def _strip_fences(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()
