"""Decision links (Send and Wait): `GET /api/decisions/{token}` shows what the link
decides and a button; `POST` to the same address records it and resumes the run.

No bearer token: the link's signature is its auth (`nodeloom.secrets.links`). GET
changes nothing, because mail scanners fetch links before people click them. A link is
accepted only while the wait it was made for is open (the run is paused and that node's
last `waiting` event, not yet `resumed`, carries the link's wait id): so each link works
once, and a link of an earlier wait (a Loop's previous item) does not answer a later one.
A link followed after its expiry resumes the run on the node's `timeout` port.
"""

from __future__ import annotations

import html
import time
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from nodeloom.errors import NodeloomError
from nodeloom.fleet.jobs import Job
from nodeloom.paths import data_dir
from nodeloom.secrets.links import DecisionLink, LinkError, read_decision
from nodeloom.server.runtime import State
from nodeloom.store import NotFoundError

router = APIRouter(tags=["decisions"])

_WORDS = {"approve": "Approve", "reject": "Reject", "timeout": "Too late"}


@router.get("/api/decisions/{token}", response_class=HTMLResponse)
async def show_decision(token: str, state: State) -> HTMLResponse:
    """A page saying what the link decides, with a button that POSTs it."""
    link, problem = await _open_link(state, token)
    if problem is not None:
        return problem
    assert link is not None
    decision = _decision(link)
    if decision == "timeout":
        text = "This link has expired: following it records that the decision came too late."
    else:
        text = f"Record your decision: {_WORDS[decision].lower()}."
    form = (
        f'<form method="post"><button type="submit">{html.escape(_WORDS[decision])}</button></form>'
    )
    return _page(200, _WORDS[decision], f"<p>{html.escape(text)}</p>{form}")


@router.post("/api/decisions/{token}", response_class=HTMLResponse)
async def record_decision(token: str, state: State) -> HTMLResponse:
    """Record the decision and resume the run in the background (202)."""
    link, problem = await _open_link(state, token)
    if problem is not None:
        return problem
    assert link is not None
    decision = _decision(link)

    try:
        await state.submit(Job.resume(link.run_id, {link.node_id: decision}))
    except NodeloomError as exc:  # another click won the race: the run is no longer paused
        if exc.code == "queue_unavailable":
            raise
        return _already()
    return _page(202, "Thank you", f"<p>Recorded: {html.escape(_WORDS[decision].lower())}.</p>")


async def _open_link(state: Any, token: str) -> tuple[DecisionLink | None, HTMLResponse | None]:
    try:
        link = read_decision(data_dir(), token)
    except LinkError as exc:
        return None, _page(404, "Unknown link", f"<p>{html.escape(str(exc))}.</p>")
    try:
        record = await state.store.get_run(link.run_id)
    except NotFoundError:
        return None, _page(404, "Unknown link", "<p>The run of this link no longer exists.</p>")
    if record.status != "paused" or not await _wait_is_open(state, link):
        return None, _already()
    return link, None


async def _wait_is_open(state: Any, link: DecisionLink) -> bool:
    """Is the node's last wait, still unanswered, the one the link was made for?"""
    open_wait: str | None = None
    for event in await state.store.events(link.run_id):
        if event.node_id != link.node_id:
            continue
        if event.event_type == "waiting":
            value = (event.data or {}).get("value")
            open_wait = value.get("wait") if isinstance(value, dict) else None
        elif event.event_type in ("resumed", "completed", "error", "skipped"):
            open_wait = None
    return open_wait is not None and open_wait == link.wait


def _decision(link: DecisionLink) -> str:
    return "timeout" if link.expired(time.time()) else link.decision


def _already() -> HTMLResponse:
    return _page(
        409,
        "Already decided",
        "<p>This request is no longer waiting: a decision was already recorded, or the run "
        "ended or was cancelled.</p>",
    )


def _page(status: int, title: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<meta name='robots' content='noindex'><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>",
        status_code=status,
    )
