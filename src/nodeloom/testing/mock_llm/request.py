"""A chat.completions request as the mock LLM's rules and replies see it.

ChatRequest     the parts of a request body that matter here, checked
InvalidRequest  a body that is not a chat.completions request (answered with a 400)
message_text    a message's text, whether its content is a string or parts
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SYSTEM_ROLES = frozenset({"system", "developer"})


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text: its content string, or its text parts joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text")
        )
    return ""


class InvalidRequest(ValueError):
    """A request body that is not a chat.completions request; `param` names the field."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat.completions request body that rules and replies look at."""

    model: str
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]  # the `function` objects: name, parameters, ...
    tool_choice: Any
    response_format: Mapping[str, Any] | None
    stream: bool
    include_usage: bool
    max_tokens: int | None

    @classmethod
    def from_body(cls, body: Any) -> ChatRequest:
        if not isinstance(body, Mapping):
            raise InvalidRequest("the request body must be a JSON object")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise InvalidRequest("'model' is required and must be a string", "model")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise InvalidRequest("'messages' must be a non-empty list", "messages")
        for index, message in enumerate(messages):
            if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
                raise InvalidRequest(
                    f"messages[{index}] must be an object with a 'role'", f"messages[{index}]"
                )
        tools = []
        for index, tool in enumerate(body.get("tools") or []):
            function = tool.get("function") if isinstance(tool, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                raise InvalidRequest(
                    f"tools[{index}] must be {{'type': 'function', 'function': {{'name': ...}}}}",
                    f"tools[{index}]",
                )
            tools.append(function)
        response_format = body.get("response_format")
        stream_options = body.get("stream_options") or {}
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        return cls(
            model=model,
            messages=tuple(messages),
            tools=tuple(tools),
            tool_choice=body.get("tool_choice"),
            response_format=response_format if isinstance(response_format, Mapping) else None,
            stream=body.get("stream") is True,
            include_usage=isinstance(stream_options, Mapping)
            and stream_options.get("include_usage") is True,
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        )

    @property
    def tool_names(self) -> list[str]:
        return [str(tool["name"]) for tool in self.tools]

    @property
    def last_message(self) -> Mapping[str, Any]:
        return self.messages[-1]

    @property
    def last_user_text(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return message_text(users[-1]) if users else ""

    @property
    def system_text(self) -> str:
        return "\n".join(message_text(m) for m in self.messages if m.get("role") in SYSTEM_ROLES)

    @property
    def json_schema(self) -> Mapping[str, Any] | None:
        """The schema of a `response_format: {type: json_schema}` request, else None."""
        if self.response_format is None or self.response_format.get("type") != "json_schema":
            return None
        spec = self.response_format.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        return schema if isinstance(schema, Mapping) else {}

    def trailing_tool_results(self) -> list[tuple[str | None, str]]:
        """(tool name, text) of the tool messages that end the request, oldest first; the
        name comes from the assistant's tool call with the same id."""
        names: dict[str, str] = {}
        for message in self.messages:
            for call in message.get("tool_calls") or []:
                if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                    names[str(call.get("id"))] = str(call["function"].get("name"))
        results: list[tuple[str | None, str]] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            name = names.get(str(message.get("tool_call_id"))) or message.get("name")
            results.append((name, message_text(message)))
        return results[::-1]
