"""Webhooks: `POST /api/hooks/{path}` runs the saved flow whose Webhook Trigger has `path`.

No bearer token here: the node's secret, sent in its secret header, is the request's
auth (compared in constant time; a missing or wrong one is 401 and starts no run). The
body size limit applies as everywhere. Sync hooks answer with the run's result, async
hooks answer 202 at once.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import NodeloomError
from nodeloom.fleet.jobs import Job
from nodeloom.secrets import UnknownCredentialError
from nodeloom.server.errors import ApiError
from nodeloom.server.models import ErrorResponse, RunAccepted
from nodeloom.server.routes.credentials import vault
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import ServerState, State
from nodeloom.server.uploads import is_multipart, multipart_body
from nodeloom.store import FlowVersion

log = logging.getLogger("nodeloom.server")

router = APIRouter(tags=["hooks"])

HOOK_TYPE = "webhook-trigger"


@dataclass(frozen=True, eq=False)
class Hook:
    """One Webhook Trigger of the latest version of a saved flow, with its settings."""

    flow: Flow
    flow_id: str
    flow_name: str
    version: int
    node_id: str
    path: str
    secret_header: str
    secret: str
    mode: str
    timeout: float


class HookIndex:
    """The hooks of every saved flow, read once per flow version (versions never change)."""

    def __init__(self) -> None:
        self._by_flow: dict[str, tuple[int, list[Hook]]] = {}

    async def find(self, state: ServerState, path: str) -> Hook:
        summaries = await state.store.list_flows()
        for gone in set(self._by_flow) - {s.id for s in summaries}:
            del self._by_flow[gone]  # deleted flows answer no more
        for summary in summaries:
            cached = self._by_flow.get(summary.id)
            if cached is None or cached[0] != summary.latest_version:
                saved = await state.store.get_flow(summary.id)
                self._by_flow[summary.id] = (saved.version, hooks_of(state, saved))
        found = [h for _, hooks in self._by_flow.values() for h in hooks if h.path == path]
        if not found:
            raise ApiError(
                404,
                "not_found",
                f"no saved flow has a Webhook Trigger with path {path!r}; "
                "save a flow whose webhook-trigger node has that path",
            )
        flows = sorted({(h.flow_id, h.flow_name) for h in found})
        if len(flows) > 1:
            named = ", ".join(f"{name!r} ({flow_id})" for flow_id, name in flows)
            raise ApiError(
                409,
                "duplicate_hook",
                f"several flows have a Webhook Trigger with path {path!r}: {named}; "
                "change the path in all but one",
                flows=[flow_id for flow_id, _ in flows],
            )
        return found[0]


def hooks_of(state: ServerState, saved: FlowVersion) -> list[Hook]:
    """The Webhook Triggers of a saved version (none if it no longer loads)."""
    definition = state.registry.definition(HOOK_TYPE)
    if definition is None:
        return []
    try:
        flow = state.flow(saved.flow_id, saved.version, saved.document)
    except NodeloomError:
        return []  # e.g. a node type no longer installed: the flow cannot run anyway
    defaults = {p.id: p.default for p in definition.parameters}
    hooks = []
    for node in flow.graph.nodes:
        if node.type != HOOK_TYPE:
            continue
        data = {**defaults, **node.data}
        if not isinstance(data.get("path"), str) or not isinstance(data.get("secret"), str):
            continue
        hooks.append(
            Hook(
                flow=flow,
                flow_id=saved.flow_id,
                flow_name=saved.name,
                version=saved.version,
                node_id=node.id,
                path=data["path"],
                secret_header=str(data["secret_header"]),
                secret=data["secret"],
                mode=str(data["mode"]),
                timeout=float(data["timeout"]),
            )
        )
    return hooks


_CREDENTIAL_REFERENCE = re.compile(r"^\{\{\s*\$credentials\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


def _expected_secret(hook: Hook) -> bytes | None:
    """The secret to compare with: the node's `secret`, or the credential it names as
    `{{ $credentials.NAME }}` (read at each call, so a rotated credential applies at once).
    None when that credential is missing: every request is refused, and the log says why."""
    reference = _CREDENTIAL_REFERENCE.match(hook.secret)
    if reference is None:
        return hook.secret.encode()
    try:
        return vault().get(reference.group(1)).encode()
    except UnknownCredentialError:
        log.warning(
            "webhook %r (flow %s, node %s): its secret names the credential %r, which does "
            "not exist; create it with `nodeloom credentials set %s`",
            hook.path,
            hook.flow_id,
            hook.node_id,
            reference.group(1),
            reference.group(1),
        )
        return None


def hook_index(request: Request) -> HookIndex:
    index: HookIndex | None = getattr(request.app.state, "nodeloom_hooks", None)
    if index is None:
        index = request.app.state.nodeloom_hooks = HookIndex()
    return index


_RESPONSES: dict[int | str, dict[str, Any]] = {
    **errors(404, 409),
    504: {"model": ErrorResponse, "description": "a sync hook's run did not end in time"},
}


@router.post("/api/hooks/{webhook_path:path}", responses=_RESPONSES)
async def call_hook(webhook_path: str, request: Request, state: State) -> JSONResponse:
    """Run the flow whose Webhook Trigger has `path`, with the request as its trigger
    (`{body, headers, query}`). Needs the node's secret in its secret header, not a
    bearer token. Sync: 200 with the result (422 if the run fails, 504 past the node's
    timeout). Async: 202 with the run id."""
    path = webhook_path
    hook = await hook_index(request).find(state, path)
    sent = request.headers.get(hook.secret_header)
    expected = _expected_secret(hook)
    if sent is None or expected is None or not hmac.compare_digest(sent.encode(), expected):
        raise ApiError(
            401,
            "unauthorized",
            f"the {hook.secret_header} header is missing or wrong; send the secret of the "
            f"Webhook Trigger with path {path!r} in it",
        )
    trigger = {
        "body": await _body(request, state),
        "headers": {k: v for k, v in request.headers.items() if k != hook.secret_header.lower()},
        "query": dict(request.query_params),
        "message": "",
    }
    loop = asyncio.get_running_loop()
    began = loop.time()
    finished: asyncio.Future[RunResult | None] = loop.create_future()
    run_id = uuid.uuid4().hex

    async def keep(outcome: Awaitable[RunResult]) -> RunResult:
        try:
            result = await outcome
        except BaseException:
            if not finished.done():
                finished.set_result(None)
            raise
        if not finished.done():
            finished.set_result(result)
        return result

    job = Job.start(run_id, flow_id=hook.flow_id, flow_version=hook.version, trigger=trigger)
    # A sync hook waits for its run wherever it runs (--queue: a worker, followed here).
    await state.submit(job, flow=hook.flow, wrap=keep if hook.mode != "async" else None)
    run_url = str(request.url_for("get_run", run_id=run_id).path)
    if hook.mode == "async":
        return await _accepted(state, run_id, run_url)
    remaining = max(hook.timeout - (loop.time() - began), 0.0)
    done, _ = await asyncio.wait({finished}, timeout=remaining)
    if not done:
        raise ApiError(
            504,
            "hook_timeout",
            f"run {run_id} of flow {hook.flow_name!r} did not end within the hook's timeout "
            f"({hook.timeout:g} s); it goes on: follow it at {run_url}",
            run_id=run_id,
            run_url=run_url,
        )
    result = finished.result()
    if result is None:
        raise ApiError(500, "internal_error", f"run {run_id} ended with an error; see {run_url}")
    if result.status is RunStatus.COMPLETED:
        return JSONResponse(
            {"run_id": run_id, "status": result.status.value, "result": _result_of(hook, result)}
        )
    if result.status is RunStatus.FAILED:
        error = result.error or {}
        raise ApiError(
            422,
            "run_failed",
            str(error.get("message") or f"run {run_id} failed; see {run_url}"),
            run_id=run_id,
            run_url=run_url,
            node_id=error.get("node_id"),
            node_name=error.get("node_name"),
        )
    return await _accepted(state, run_id, run_url)  # paused or cancelled: see the run


def _result_of(hook: Hook, result: RunResult) -> Any:
    """The value a node set as the run's result, else the outputs of the end nodes (the
    nodes no edge leaves) by name."""
    if result.result is not None:
        return result.result
    graph = hook.flow.graph
    sources = {edge.source for edge in graph.edges}
    return {
        node.name: result.outputs[node.name]
        for node in graph.nodes
        if node.id not in sources and node.name in result.outputs
    }


async def _body(request: Request, state: ServerState) -> Any:
    """The body: parsed JSON when it says it is JSON, a form whose files are blob
    references when it is multipart/form-data (see nodeloom.server.uploads), else text;
    None when empty."""
    if is_multipart(request):
        return await multipart_body(request, state.store.binaries)
    raw = await request.body()
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "json" in request.headers.get("content-type", ""):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ApiError(422, "invalid_request", f"the body is not valid JSON: {exc}") from exc
    return text


async def _accepted(state: ServerState, run_id: str, run_url: str) -> JSONResponse:
    record = await state.store.get_run(run_id)
    body = RunAccepted(
        run_id=run_id, status=record.status, run_url=run_url, events_url=f"{run_url}/events"
    )
    return JSONResponse(body.model_dump(), status_code=202)
