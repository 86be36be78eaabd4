"""The OpenAI-compatible endpoint: each saved flow is a model, a chat completion is one
recorded run of it. The last user message is the turn's input (the trigger's `message`);
the conversation is the run's chat_id; the answer is the flow's result, or its end
nodes' output. Streaming forwards the tokens nodes stream (`progress` events)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from nodeloom.engine.events import EventSink, FanoutSink
from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.plugins.contract import Event
from nodeloom.server.errors import ApiError
from nodeloom.server.openai_models import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatMessage,
    Choice,
    ChunkChoice,
    Delta,
    ModelList,
    ModelObject,
    OpenAIError,
    RunReference,
    Usage,
)
from nodeloom.server.runtime import ServerState, State
from nodeloom.store import FlowSummary

router = APIRouter(prefix="/v1", tags=["openai"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": OpenAIError, "description": "no valid bearer token"},
    404: {"model": OpenAIError, "description": "`model_not_found`: no flow with that id or name"},
    409: {"model": OpenAIError, "description": "`run_paused`: the flow waits for a person"},
    422: {"model": OpenAIError, "description": "`run_failed` (names the node) or a bad request"},
}


@router.get("/models", response_model=ModelList, responses=_ERRORS)
async def list_models(state: State) -> ModelList:
    """Every saved flow, as a model whose id is the flow's id."""
    return ModelList(data=[_model(flow) for flow in await state.store.list_flows()])


@router.get("/models/{model}", response_model=ModelObject, responses=_ERRORS)
async def get_model(model: str, state: State) -> ModelObject:
    """One flow, by id or name."""
    return _model(await _find(state, model))


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        **_ERRORS,
        200: {"content": {"text/event-stream": {}}, "description": "a completion, or chunks"},
    },
)
async def chat_completions(body: ChatCompletionRequest, request: Request, state: State) -> Any:
    """Run the flow `model` with the last user message. With `stream`, the answer is
    Server-Sent Events of `chat.completion.chunk`s ending with `data: [DONE]`."""
    summary = await _find(state, body.model)
    saved = await state.store.get_flow(summary.id)
    flow = state.flow(saved.flow_id, saved.version, saved.document)
    message = _last_user_message(body.messages)
    chat_id = body.user or _conversation_id(body.messages, request)
    turn = _Turn(flow, body.model, chat_id)

    def begin(sink: EventSink) -> Any:
        return turn.run(
            state.runs.start(
                flow,
                message,
                sink=FanoutSink(sink, turn),
                chat_id=chat_id,
                run_id=turn.run_id,
                flow_id=saved.flow_id,
                flow_version=saved.version,
            )
        )

    await state.launcher.launch(begin, turn.run_id)
    if not body.stream:
        return _completion(turn, await turn.outcome)
    first = await turn.next_token()
    if first is None:  # nothing streamed: the run has ended, so errors get their status
        result = await turn.outcome
        _raise_for(result)
        return _stream(turn, [_answer(flow, result)], _nothing())
    return _stream(turn, [first], _rest(turn))


# -- one turn: a run, its tokens and its outcome -----------------------------------------


class _Turn:
    """The sink that collects a run's tokens, and the run's outcome once it has ended."""

    def __init__(self, flow: Flow, model: str, chat_id: str) -> None:
        self.flow = flow
        self.model = model
        self.chat_id = chat_id
        self.run_id = uuid.uuid4().hex
        self.created = int(time.time())
        self.outcome: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()
        self._tokens: asyncio.Queue[str | None] = asyncio.Queue()
        self.streamed = False

    def emit(self, event: Event) -> None:
        data = event.data or {}
        if event.event_type == "progress" and data.get("token"):
            self._tokens.put_nowait(str(data["token"]))

    async def run(self, start: Any) -> RunResult:
        try:
            result: RunResult = await start
        except asyncio.CancelledError:
            self.outcome.cancel()
            raise
        except BaseException as exc:
            if not self.outcome.done():
                self.outcome.set_exception(exc)
                self.outcome.exception()  # the launch reports it: no "never retrieved"
            raise
        finally:
            self._tokens.put_nowait(None)
        if not self.outcome.done():  # a caller that went away cancels its wait
            self.outcome.set_result(result)
        return result

    async def next_token(self) -> str | None:
        """The next streamed token; None once the run has ended."""
        token = await self._tokens.get()
        if token is not None:
            self.streamed = True
        return token


async def _rest(turn: _Turn) -> AsyncIterator[str | dict[str, Any]]:
    """The tokens after the first, then an error frame if the run did not complete."""
    while (token := await turn.next_token()) is not None:
        yield token
    result = await turn.outcome
    try:
        _raise_for(result)
    except ApiError as error:
        yield {"error": {"message": error.message, "code": error.code, **error.extra}}


async def _nothing() -> AsyncIterator[str | dict[str, Any]]:
    for _ in ():
        yield ""


def _stream(
    turn: _Turn, first: list[str], rest: AsyncIterator[str | dict[str, Any]]
) -> StreamingResponse:
    chunk_id = f"chatcmpl-{turn.run_id}"

    def chunk(delta: Delta, finish: bool = False) -> str:
        body = ChatCompletionChunk(
            id=chunk_id,
            created=turn.created,
            model=turn.model,
            choices=[ChunkChoice(delta=delta, finish_reason="stop" if finish else None)],
        )
        return f"data: {body.model_dump_json()}\n\n"

    async def frames() -> AsyncIterator[str]:
        yield chunk(Delta(role="assistant", content=""))
        for text in first:
            yield chunk(Delta(content=text))
        async for item in rest:
            if isinstance(item, dict):  # the run failed or paused after streaming
                yield f"data: {json.dumps(item)}\n\n"
                return
            yield chunk(Delta(content=item))
        yield chunk(Delta(), finish=True)
        yield "data: [DONE]\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream", headers=_headers(turn))


def _completion(turn: _Turn, result: RunResult) -> JSONResponse:
    _raise_for(result)
    usage = {key: int(result.usage.get(key, 0)) for key in Usage.model_fields}
    body = ChatCompletion(
        id=f"chatcmpl-{turn.run_id}",
        created=turn.created,
        model=turn.model,
        choices=[Choice(message=AssistantMessage(content=_answer(turn.flow, result)))],
        usage=Usage(**usage),
        nodeloom=RunReference(run_id=turn.run_id, chat_id=turn.chat_id),
    )
    return JSONResponse(body.model_dump(), headers=_headers(turn))


def _headers(turn: _Turn) -> dict[str, str]:
    return {"X-Nodeloom-Run-Id": turn.run_id, "X-Nodeloom-Chat-Id": turn.chat_id}


# -- what a turn answers -------------------------------------------------------------------


def _raise_for(result: RunResult) -> None:
    """An OpenAI-style error for a run that did not complete: 422 failed (naming the
    node), 409 paused (naming the waiting nodes) or cancelled."""
    if result.status is RunStatus.COMPLETED:
        return
    error = result.error or {}
    if result.status is RunStatus.FAILED:
        node = error.get("node_name") or error.get("node_id")
        raise ApiError(
            422,
            "run_failed",
            str(error.get("message") or f"the run of the flow failed at node '{node}'"),
            type="flow_error",
            node_id=error.get("node_id"),
            node_name=error.get("node_name"),
            run_id=result.run_id,
        )
    if result.status is RunStatus.PAUSED:
        waiting = [
            {"node_id": w["node_id"], "node_name": w["node_name"], "kind": w["kind"]}
            for w in result.waiting
        ]
        names = ", ".join(f"'{w['node_name']}'" for w in waiting)
        raise ApiError(
            409,
            "run_paused",
            f"the run waits for a person at {names}; answer with POST "
            f"/api/runs/{result.run_id}/resume",
            type="flow_error",
            run_id=result.run_id,
            waiting=waiting,
        )
    raise ApiError(
        409,
        "run_cancelled",
        f"the run {result.run_id} was cancelled",
        type="flow_error",
        run_id=result.run_id,
    )


def _answer(flow: Flow, result: RunResult) -> str:
    """The run's result if a node set one, else the main outputs of the end nodes that
    ran: a string as is, a `{"text"|"response"|"message": str}` as that string, anything
    else as JSON text; several joined by blank lines."""
    if result.result is not None:
        return _text(result.result)
    parts = []
    for index in flow.plan.sinks:
        node = flow.plan.nodes[index]
        ports = result.outputs.get(node.name, {})
        if node.main_port in ports:
            parts.append(_text(ports[node.main_port]))
    return "\n\n".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), *_ = value.items()
        if key in ("text", "response", "message") and isinstance(inner, str):
            return inner
    return json.dumps(value, ensure_ascii=False, default=str)


# -- finding the flow and the conversation -------------------------------------------------


async def _find(state: ServerState, model: str) -> FlowSummary:
    flows = await state.store.list_flows()
    for flow in flows:
        if flow.id == model:
            return flow
    for flow in flows:
        if flow.name == model:
            return flow
    names = ", ".join(f"'{flow.id}' ({flow.name})" for flow in flows) or "none saved yet"
    raise ApiError(
        404,
        "model_not_found",
        f"no flow with the id or name '{model}'; the models are: {names} (GET /v1/models)",
        type="invalid_request_error",
        param="model",
    )


def _model(flow: FlowSummary) -> ModelObject:
    return ModelObject(id=flow.id, created=int(flow.created_at.timestamp()), name=flow.name)


def _last_user_message(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.text()
    raise ApiError(
        422,
        "invalid_request",
        "`messages` has no message with role 'user': the last one is the flow's input",
        type="invalid_request_error",
        param="messages",
    )


def _conversation_id(messages: list[ChatMessage], request: Request) -> str:
    """A chat_id that stays the same as the conversation goes on: a digest of its opening
    (the system messages and the first user message), per token."""
    opening: list[list[str]] = []
    for message in messages:
        opening.append([message.role, message.text()])
        if message.role == "user":
            break
    token = getattr(request.state, "token", None)
    seed = json.dumps([token.id if token is not None else None, opening])
    return "openai-" + hashlib.sha256(seed.encode()).hexdigest()[:32]
