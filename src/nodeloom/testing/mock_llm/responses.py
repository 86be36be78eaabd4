"""What the mock LLM answers, in the OpenAI chat.completions wire format.

    reply_for(action, request)   the Reply an action gives (content, tool calls, finish)
    completion(reply, ...)       a `chat.completion` object
    chunks(reply, ...)           the `chat.completion.chunk` objects of a stream
    usage(request, reply)        deterministic token counts: whitespace-separated words
    example_for(schema)          a value that validates against a JSON schema
    split_tokens(text)           the stream's tokens: each word with its following space

Everything here is pure: the server adds HTTP, delays and the SSE framing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nodeloom.testing.mock_llm.request import ChatRequest, message_text
from nodeloom.testing.mock_llm.script import Action, render_template

FINGERPRINT = "fp_nodeloom_mock"
_TOKEN = re.compile(r"\s*\S+\s*")
_MAX_DEPTH = 32
_STRING_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


@dataclass(frozen=True)
class ToolCallReply:
    id: str
    name: str
    arguments: str  # JSON text, as the wire carries it


@dataclass(frozen=True)
class Reply:
    """What the assistant says: content and/or tool calls, and why it stopped."""

    content: str | None
    tool_calls: tuple[ToolCallReply, ...] = ()
    finish_reason: str = "stop"


def reply_for(action: Action, request: ChatRequest, *, sequence: int) -> Reply:
    """The Reply `action` gives to `request`; `sequence` numbers the generated call ids."""
    calls: tuple[ToolCallReply, ...] = ()
    if action.has_json:
        content: str | None = json.dumps(action.json_, ensure_ascii=False)
    elif action.reply is not None or action.tool_calls:
        content = None
        if action.reply is not None:
            content = render_template(action.reply, placeholders(request))
        calls = tuple(
            ToolCallReply(call.id or f"call_{sequence}_{i}", call.name, call.arguments_json())
            for i, call in enumerate(action.tool_calls or [])
        )
    else:
        content, calls = echo(request, sequence=sequence)
    finish = "tool_calls" if calls else "stop"
    if content and request.max_tokens is not None:
        tokens = split_tokens(content)
        if len(tokens) > request.max_tokens:
            content = "".join(tokens[: max(request.max_tokens, 0)]).rstrip()
            finish = "length"
    return Reply(content, calls, action.finish_reason or finish)


def echo(request: ChatRequest, *, sequence: int) -> tuple[str | None, tuple[ToolCallReply, ...]]:
    """The zero-config answer: call the first offered tool (unless the request ends with
    tool results, or tool_choice says otherwise), else schema-valid JSON for a json_schema
    response_format, else `mock reply to: <last user message>`."""
    tool = _tool_to_call(request)
    if tool is not None:
        arguments = example_for(tool.get("parameters") or {"type": "object"})
        return None, (
            ToolCallReply(f"call_{sequence}_0", str(tool["name"]), json.dumps(arguments)),
        )
    text = f"mock reply to: {request.last_user_text}"
    if request.json_schema is not None:
        return json.dumps(example_for(request.json_schema)), ()
    if request.response_format is not None and request.response_format.get("type") == "json_object":
        return json.dumps({"reply": text}), ()
    return text, ()


def _tool_to_call(request: ChatRequest) -> Mapping[str, Any] | None:
    choice = request.tool_choice
    if not request.tools or request.trailing_tool_results() or choice == "none":
        return None
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        wanted = choice["function"].get("name")
        for tool in request.tools:
            if tool["name"] == wanted:
                return tool
    return request.tools[0]


def placeholders(request: ChatRequest) -> dict[str, str]:
    """The values of {last_message} and {tool_result} (the trailing tool results' text,
    joined by newlines; empty when the request does not end with tool results)."""
    return {
        "last_message": message_text(request.last_message),
        "tool_result": "\n".join(text for _, text in request.trailing_tool_results()),
    }


def split_tokens(text: str) -> list[str]:
    """Each word with the whitespace after it (the first also keeps any before it), so
    the tokens join back to `text` exactly."""
    tokens = _TOKEN.findall(text)
    return tokens or ([text] if text else [])


def count_words(text: str) -> int:
    return len(text.split())


def usage(request: ChatRequest, reply: Reply) -> dict[str, int]:
    """Words in the request's message texts and in the reply (content, tool names and
    arguments), each at least 1."""
    prompt = max(1, sum(count_words(message_text(m)) for m in request.messages))
    completion_words = count_words(reply.content or "") + sum(
        count_words(call.name) + count_words(call.arguments) for call in reply.tool_calls
    )
    completion_tokens = max(1, completion_words)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion(
    reply: Reply, request: ChatRequest, *, completion_id: str, created: int
) -> dict[str, Any]:
    """The `chat.completion` object for a non-streamed request."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.tool_calls
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": request.model,
        "system_fingerprint": FINGERPRINT,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}
        ],
        "usage": usage(request, reply),
    }


def chunks(
    reply: Reply, request: ChatRequest, *, completion_id: str, created: int
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a stream: the role, one chunk per content
    token, per tool call a chunk with its id and name then one per argument token, the
    finish chunk, and with `stream_options.include_usage` a last chunk with the usage."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": request.model,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if request.include_usage:
            data["usage"] = None
        return data

    out = [chunk({"role": "assistant", "content": "" if reply.content is not None else None})]
    out.extend(chunk({"content": token}) for token in split_tokens(reply.content or ""))
    for index, call in enumerate(reply.tool_calls):
        start = {"name": call.name, "arguments": ""}
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call.id, "type": "function", "function": start}
                    ]
                }
            )
        )
        out.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            for fragment in split_tokens(call.arguments)
        )
    out.append(chunk({}, reply.finish_reason))
    if request.include_usage:
        final = chunk({})
        final["choices"] = []
        final["usage"] = usage(request, reply)
        out.append(final)
    return out


def example_for(schema: Any) -> Any:
    """A value valid against the JSON schema `schema`: required properties only, the
    first enum value or anyOf/oneOf branch, "example" for strings (or a value of their
    `format`), 0 or the minimum for numbers, false, one array item; `$ref`s into `$defs`
    or `definitions` are followed."""
    return _example(schema, schema if isinstance(schema, Mapping) else {}, 0)


def _example(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping):
        return None if schema is False else "example"
    if depth > _MAX_DEPTH:
        return None
    if isinstance(schema.get("$ref"), str):
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return _example({**_resolve(root, schema["$ref"]), **siblings}, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _example(schema[key][0], root, depth + 1)
    if schema.get("allOf"):
        return _all_of(schema, root, depth)
    kind = _type(schema)
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            name: _example(properties.get(name, {}), root, depth + 1)
            for name in schema.get("required") or []
        }
    if kind == "array":
        return _array(schema, root, depth)
    if kind == "string":
        text = _STRING_FORMATS.get(str(schema.get("format")), "example")
        text = text.ljust(int(schema.get("minLength", 0)), "x")
        return text[: schema["maxLength"]] if "maxLength" in schema else text
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "example"


def _type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        if "properties" in schema or "required" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
    return kind


def _all_of(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    values = [_example(part, root, depth + 1) for part in schema["allOf"]]
    rest = {k: v for k, v in schema.items() if k != "allOf"}
    if _type(rest) is not None:
        values.append(_example(rest, root, depth + 1))
    if not all(isinstance(value, dict) for value in values):
        return values[0]
    merged: dict[str, Any] = {}
    for value in values:
        merged.update(value)
    return merged


def _array(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> list[Any]:
    if schema.get("prefixItems"):
        return [_example(item, root, depth + 1) for item in schema["prefixItems"]]
    least = int(schema.get("minItems", 0))
    count = max(least, 1 if depth < _MAX_DEPTH // 4 else 0)
    if "maxItems" in schema:
        count = min(count, int(schema["maxItems"]))
    return [_example(schema.get("items", {}), root, depth + 1) for _ in range(count)]


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    value: float
    if "minimum" in schema:
        value = schema["minimum"]
    elif "exclusiveMinimum" in schema:
        value = schema["exclusiveMinimum"] + 1
    elif "maximum" in schema and schema["maximum"] < 0:
        value = schema["maximum"]
    elif "exclusiveMaximum" in schema and schema["exclusiveMaximum"] <= 0:
        value = schema["exclusiveMaximum"] - 1
    else:
        value = 0
    return math.ceil(value) if integer else value


def _resolve(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    if not ref.startswith("#"):
        return {}
    node: Any = root
    for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}
