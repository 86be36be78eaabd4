"""The bodies of the OpenAI-compatible endpoint (/v1), shaped as OpenAI's so its clients
parse them: a model list, a chat completion request, a completion and its stream chunks.
Only the fields nodeloom uses are declared; requests may carry any other (ignored)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# -- models ------------------------------------------------------------------------------


class ModelObject(BaseModel):
    """A saved flow, as a model: `id` is the flow's id, `name` its name."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "nodeloom"
    name: str


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelObject]


# -- the request ---------------------------------------------------------------------------


class ChatMessage(BaseModel):
    """A message of the conversation. `content` is text, or a list of parts of which the
    `text` ones are read."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(
            str(part.get("text", "")) for part in self.content if part.get("type") == "text"
        )


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(description="a saved flow's id or name (see GET /v1/models)")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    user: str | None = Field(
        None,
        description="names the conversation: its chat_id (else the `X-Chat-Id` header; "
        "with neither, each completion is a new conversation)",
    )
    flow_steps: bool = Field(
        False,
        description="nodeloom extension: also send the turn's flow_step blocks "
        "(`nodeloom.steps`; streamed, in a chunk before the last)",
    )


# -- the answer ----------------------------------------------------------------------------


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: Literal["stop"] = "stop"
    logprobs: None = None


class RunReference(BaseModel):
    """Where the turn's run is recorded (a nodeloom extension of the OpenAI shape)."""

    run_id: str
    chat_id: str


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    nodeloom: RunReference


class Delta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: Literal["stop"] | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]


class OpenAIErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    message: str
    type: str
    code: str


class OpenAIError(BaseModel):
    error: OpenAIErrorDetail
