"""Thread messages as plain JSON, and the view of a thread a model is sent.

A thread is a list of messages:

    {"role": "user", "content": "..."}
    {"role": "assistant", "content": "...", "tool_calls": [{"id", "name", "arguments"}]}
    {"role": "tool", "tool_call_id": "...", "name": "...", "content": "..."}

Threads receive messages copied from other threads (`data_in_slice`), so a thread may hold a
tool result without the call it answers, or a call without its results. Chat APIs reject
both, so the model is sent a sound view: a tool result whose call is not just before it
becomes a user message ("Result of tool 'x': ..."), and a call nobody answered becomes text
in its assistant message. The stored thread is never changed.
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str, tool_calls: list[dict[str, Any]] | None = None) -> Message:
    message: Message = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def tool_result(call_id: str, name: str, text: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


def as_text(value: Any) -> str:
    """A tool result as message text: a string as is, JSON for JSON values, else str()."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def as_json(value: Any) -> Any:
    """A tool result as a JSON value: itself when it is JSON, else its text."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def copy(messages: list[Message]) -> list[Message]:
    return json.loads(json.dumps(messages))


def to_model(messages: list[Message]) -> list[Any]:
    """Agno messages for a model call: the sound view of `messages` described above."""
    from agno.models.message import Message as AgnoMessage

    view: list[Any] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message.get("role")
        if role == "assistant":
            following = _results_after(messages, index)
            answered = {m.get("tool_call_id") for m in following}
            calls = [c for c in message.get("tool_calls") or [] if c.get("id") in answered]
            unanswered = [c for c in message.get("tool_calls") or [] if c.get("id") not in answered]
            text = message.get("content") or ""
            if unanswered:
                text = "\n".join(filter(None, [text, *(_called(c) for c in unanswered)]))
            view.append(
                AgnoMessage(role="assistant", content=text, tool_calls=_wire_calls(calls) or None)
            )
            kept = {c["id"] for c in calls}
            # The results of the kept calls directly after the call, any others after them.
            for result in sorted(following, key=lambda m: m.get("tool_call_id") not in kept):
                view.append(_tool_view(result, kept, AgnoMessage))
            index += 1 + len(following)
            continue
        if role == "tool":
            view.append(_tool_view(message, set(), AgnoMessage))
        else:
            view.append(AgnoMessage(role="user", content=message.get("content") or ""))
        index += 1
    return view


def _results_after(messages: list[Message], index: int) -> list[Message]:
    found = []
    for message in messages[index + 1 :]:
        if message.get("role") != "tool":
            break
        found.append(message)
    return found


def _tool_view(message: Message, calls: set[str], cls: Any) -> Any:
    text = message.get("content") or ""
    if message.get("tool_call_id") in calls:
        return cls(
            role="tool",
            tool_call_id=message["tool_call_id"],
            tool_name=message.get("name"),
            content=text,
        )
    return cls(role="user", content=f"Result of tool '{message.get('name', '?')}': {text}")


def _called(call: dict[str, Any]) -> str:
    return f"[called tool '{call.get('name')}' with {_arguments_text(call.get('arguments'))}]"


def _wire_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": call["id"],
            "type": "function",
            "function": {
                "name": call.get("name"),
                "arguments": _arguments_text(call.get("arguments")),
            },
        }
        for call in calls
    ]


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


__all__ = ["Message", "as_json", "as_text", "assistant", "copy", "to_model", "tool_result", "user"]
