"""The OpenAI-compatible endpoint: each saved flow is a model, a chat completion is one
recorded run of it. The last user message is the turn's input (the trigger's `message`);
the conversation is the run's chat_id; the answer is the flow's result, or its end
nodes' output. Streaming forwards the tokens nodes stream (`progress` events)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.fleet.jobs import Job
from nodeloom.server.chat import Turn, answer
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

CHAT_ID_HEADER = "X-Chat-Id"

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
    chat_id = _conversation_id(body, request)
    turn = Turn(flow, chat_id)

    job = Job.start(
        turn.run_id,
        flow_id=saved.flow_id,
        flow_version=saved.version,
        message=message,
        chat_id=chat_id,
    )
    await state.submit(job, flow=flow, sink=turn, wrap=turn.run)
    if not body.stream:
        return _completion(turn, body.model, await turn.outcome, body.flow_steps)
    first = await turn.next_token()
    if first is None:  # nothing streamed: the run has ended, so errors get their status
        result = await turn.outcome
        _raise_for(result)
        return _stream(turn, body.model, [answer(flow, result)], _nothing(), body.flow_steps)
    return _stream(turn, body.model, [first], _rest(turn), body.flow_steps)


async def _rest(turn: Turn) -> AsyncIterator[str | dict[str, Any]]:
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
    turn: Turn,
    model: str,
    first: list[str],
    rest: AsyncIterator[str | dict[str, Any]],
    steps: bool = False,
) -> StreamingResponse:
    chunk_id = f"chatcmpl-{turn.run_id}"

    def chunk(delta: Delta, finish: bool = False) -> str:
        body = ChatCompletionChunk(
            id=chunk_id,
            created=turn.created,
            model=model,
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
        if steps:  # the flow_step blocks, in a chunk of no choice (like a usage chunk)
            blocks = {"nodeloom": {"steps": turn.step_blocks()}}
            empty = ChatCompletionChunk(id=chunk_id, created=turn.created, model=model, choices=[])
            yield f"data: {json.dumps({**empty.model_dump(), **blocks}, default=str)}\n\n"
        yield chunk(Delta(), finish=True)
        yield "data: [DONE]\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream", headers=_headers(turn))


def _completion(turn: Turn, model: str, result: RunResult, steps: bool = False) -> JSONResponse:
    _raise_for(result)
    usage = {key: int(result.usage.get(key, 0)) for key in Usage.model_fields}
    body = ChatCompletion(
        id=f"chatcmpl-{turn.run_id}",
        created=turn.created,
        model=model,
        choices=[Choice(message=AssistantMessage(content=answer(turn.flow, result)))],
        usage=Usage(**usage),
        nodeloom=RunReference(run_id=turn.run_id, chat_id=turn.chat_id),
    )
    content = body.model_dump()
    if steps:
        content["nodeloom"]["steps"] = json.loads(json.dumps(turn.step_blocks(), default=str))
    return JSONResponse(content, headers=_headers(turn))


def _headers(turn: Turn) -> dict[str, str]:
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


def _conversation_id(body: ChatCompletionRequest, request: Request) -> str:
    """The run's chat_id: the request's `user`, else its `X-Chat-Id` header, else a new one
    (a turn without memory). Never derived from the messages: two callers behind one token
    who open with the same words must not share a conversation."""
    named = body.user or request.headers.get(CHAT_ID_HEADER, "").strip()
    if not named:
        return "openai-" + uuid.uuid4().hex
    if len(named) > 200:
        raise ApiError(
            422,
            "invalid_request",
            f"the conversation name (`user` or `{CHAT_ID_HEADER}`) has {len(named)} "
            "characters: send at most 200",
            type="invalid_request_error",
            param="user",
        )
    return named
