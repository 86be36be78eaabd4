"""Answers to waiting nodes: how they are checked and normalised, by request kind.

An approval takes `{"decision": "approve"|"reject", "note": "..."}` or a plain string:
approve, approved, yes, y, ok approve; reject, rejected, no, n reject. Anything else is
refused with a message: nothing is ever taken as approval by default (the original
workflow engine of seed 002 took "no" as approval).

A timer's answer, `{"$timer": <wake time, ISO 8601>}` (`timer_answer`), fits every
request: the server's timer service gives it to a paused run whose deadline passed, and
the node's `wait_for_input` raises `TimeoutError` (docs/automations.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from nodeloom.errors import NodeloomError
from nodeloom.plugins.contract import InputRequest

APPROVE = frozenset({"approve", "approved", "yes", "y", "ok"})
TIMER_KEY = "$timer"
REJECT = frozenset({"reject", "rejected", "no", "n"})


class AnswerError(NodeloomError):
    """An answer does not fit what the node asked for; the node keeps waiting."""

    code = "invalid_answer"


def timer_answer(wake_at: str) -> dict[str, str]:
    """The answer the timer service gives a node whose deadline (`wake_at`) passed."""
    return {TIMER_KEY: wake_at}


def is_timer(answer: Any) -> bool:
    return isinstance(answer, Mapping) and set(answer) == {TIMER_KEY}


def normalize_answer(request: InputRequest, answer: Any) -> Any:
    if is_timer(answer):
        return dict(answer)
    if request.kind == "wait":
        return answer  # any answer ends a wait early
    if request.kind == "approval":
        return _approval(answer)
    if request.fields:
        return _form(request, answer)
    if isinstance(answer, Mapping) and set(answer) <= {"text"} and "text" in answer:
        answer = answer["text"]
    if not isinstance(answer, str):
        raise AnswerError(f"this node asks for text, got {type(answer).__name__}")
    return answer


def _approval(answer: Any) -> dict[str, str]:
    note = ""
    if isinstance(answer, Mapping):
        note = answer.get("note") or ""
        if not isinstance(note, str):
            raise AnswerError("an approval's note is text")
        answer = answer.get("decision")
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in APPROVE:
            return {"decision": "approve", "note": note}
        if word in REJECT:
            return {"decision": "reject", "note": note}
    raise AnswerError(f"{answer!r} is not an approval decision: answer {APPROVAL_FORMS}")


APPROVAL_FORMS = (
    "approve (or approved, yes, y, ok) or reject (or rejected, no, n), optionally as "
    '{"decision": ..., "note": ...}'
)


def accepted_forms(request: InputRequest) -> str:
    """The answers `request` accepts, in words, for a message."""
    if request.kind == "approval":
        return APPROVAL_FORMS
    if not request.fields:
        return 'text (a string, or {"text": ...})'
    fields = ", ".join(
        f"{f.get('name')}: {f.get('type', 'string')}"
        + ("" if f.get("required", True) else " (optional)")
        for f in request.fields
    )
    return f"an object {{{fields}}}"


_TYPES = {"string": str, "number": (int, float), "boolean": bool}


def _form(request: InputRequest, answer: Any) -> dict[str, Any]:
    if not isinstance(answer, Mapping):
        names = ", ".join(str(f.get("name")) for f in request.fields)
        raise AnswerError(f"this node asks for a form: an object with {names}")
    result: dict[str, Any] = {}
    for field in request.fields:
        name = str(field.get("name"))
        if name not in answer or answer[name] in (None, ""):
            if field.get("required", True):
                raise AnswerError(f"the form's field '{name}' is required")
            continue
        value = answer[name]
        kind = field.get("type", "string")
        expected = _TYPES.get(kind)
        if expected and (
            (isinstance(value, bool) and kind == "number") or not isinstance(value, expected)
        ):
            raise AnswerError(f"the form's field '{name}' must be a {kind}, got {value!r}")
        result[name] = value
    unknown = set(answer) - {str(f.get("name")) for f in request.fields}
    if unknown:
        raise AnswerError(f"the form has no field {', '.join(sorted(map(str, unknown)))}")
    return result


NO_ANSWER: Any = object()
TIMED_OUT: Any = object()  # a live wait whose `wake_at` passed


async def until_answer(future: asyncio.Future[Any], wake_at: float | None) -> Any:
    """The answer `future` gets, or TIMED_OUT once `wake_at` (epoch seconds) passes."""
    if wake_at is None:
        return await future
    try:
        async with asyncio.timeout(max(wake_at - time.time(), 0.0)):
            return await asyncio.shield(future)
    except TimeoutError:
        if future.done() and not future.cancelled():
            return future.result()
        return TIMED_OUT


def iso_time(at: float) -> str:
    """Epoch seconds as ISO 8601 in UTC (what a timer's answer and events carry)."""
    return datetime.fromtimestamp(at, UTC).isoformat()


class Waiter:
    __slots__ = ("future", "node_id", "node_name", "node_type", "request")

    def __init__(
        self,
        node_id: str,
        node_name: str,
        node_type: str,
        request: InputRequest,
        future: asyncio.Future[Any],
    ) -> None:
        self.node_id = node_id
        self.node_name = node_name
        self.node_type = node_type
        self.request = request
        self.future = future

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "node_name": self.node_name,
            "node_type": self.node_type,
            **self.request.to_json(),
        }


class HumanInput:
    """A run's waiting nodes, the answers given ahead of time, and when the run is paused:
    every node still executing is waiting for a person."""

    def __init__(
        self,
        answers: Mapping[str, Any] | None = None,
        durable: bool = True,
        deadlines: Mapping[str, float] | None = None,
    ) -> None:
        self.answers: dict[str, list[Any]] = {
            ref: list(value) if isinstance(value, list) else [value]
            for ref, value in (answers or {}).items()
        }
        self.waiting: dict[str, Waiter] = {}
        self.active = 0  # nodes executing (a Loop waiting on its body does not count)
        self.paused = asyncio.Event()
        self.on_paused: Callable[[list[dict[str, Any]]], None] | None = None
        # A run without a store cannot be woken later: its `wait` nodes do not pause it.
        self.durable = durable
        self.deadlines = dict(deadlines or {})  # node id -> wake time on record

    def take_answer(self, node_id: str, node_name: str) -> Any:
        for ref in (node_id, node_name):
            queue = self.answers.get(ref)
            if queue:
                return queue.pop(0)
        return NO_ANSWER

    def add(self, waiter: Waiter) -> None:
        self.waiting[waiter.node_id] = waiter
        self.check()

    def remove(self, node_id: str) -> None:
        self.waiting.pop(node_id, None)

    def check(self) -> None:
        pausing = len(self.waiting)
        if not self.durable:
            pausing -= sum(w.request.kind == "wait" for w in self.waiting.values())
        if pausing and self.active <= pausing and not self.paused.is_set():
            self.paused.set()
            if self.on_paused is not None:
                self.on_paused(self.describe())

    def describe(self) -> list[dict[str, Any]]:
        return [w.to_json() for w in self.waiting.values()]

    def resume(self, ref: str, answer: Any) -> Any:
        """Answer a waiting node (by id or name). Raises AnswerError, and the node keeps
        waiting, if it is not waiting or the answer does not fit."""
        waiter = self.waiting.get(ref) or next(
            (w for w in self.waiting.values() if w.node_name == ref), None
        )
        if waiter is None:
            waiting = ", ".join(f"'{w.node_name}'" for w in self.waiting.values()) or "none"
            raise AnswerError(f"node '{ref}' is not waiting for input; waiting: {waiting}")
        normalized = normalize_answer(waiter.request, answer)
        self.remove(waiter.node_id)
        self.paused.clear()
        waiter.future.set_result(normalized)
        return normalized
