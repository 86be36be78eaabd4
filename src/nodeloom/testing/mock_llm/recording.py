"""What the mock LLM received: one `RecordedRequest` per request, credentials left out."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from nodeloom.testing.mock_llm.request import message_text

_CREDENTIAL_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request the mock LLM received. `rule` is the index of the rule that answered
    (None: the default action, or no answer); `headers` leave out credentials."""

    path: str
    model: str | None
    messages: list[dict[str, Any]]
    tools: list[str]
    response_format: dict[str, Any] | None
    stream: bool
    headers: dict[str, str]
    body: Any  # the JSON body as sent (its text if it was not JSON)
    rule: int | None
    status: int
    method: str = "POST"

    @property
    def last_message(self) -> str:
        """The text of the last message ("" if there is none)."""
        return message_text(self.messages[-1]) if self.messages else ""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def recorder(request: Request, body: Any) -> Callable[..., RecordedRequest]:
    """A function making this request's RecordedRequest once `rule` and `status` are known."""
    fields = body if isinstance(body, dict) else {}
    messages = fields.get("messages")
    tools = fields.get("tools")
    response_format = fields.get("response_format")

    def record(*, status: int, rule: int | None = None) -> RecordedRequest:
        return RecordedRequest(
            path=request.url.path,
            method=request.method,
            model=fields.get("model") if isinstance(fields.get("model"), str) else None,
            messages=[m for m in messages if isinstance(m, dict)]
            if isinstance(messages, list)
            else [],
            tools=[
                str(t["function"].get("name"))
                for t in tools
                if isinstance(t, dict) and isinstance(t.get("function"), dict)
            ]
            if isinstance(tools, list)
            else [],
            response_format=response_format if isinstance(response_format, dict) else None,
            stream=fields.get("stream") is True,
            headers={k: v for k, v in request.headers.items() if k not in _CREDENTIAL_HEADERS},
            body=body,
            rule=rule,
            status=status,
        )

    return record


__all__ = ["RecordedRequest", "recorder"]
