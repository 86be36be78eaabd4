"""Code: send the code, its input and the upstream outputs to a fresh process; output what
`main(input, nodes)` returned, or fail with the user's own error.

The user's code never runs in the engine's process: see `process.py` (the parent side)
and `runner.py` (the child side).
"""

from __future__ import annotations

import json
import signal
from typing import Any

from nodeloom.errors import CodeError, NodeError, NodeTimeout
from nodeloom.plugins.contract import (
    BinaryRef,
    DataValue,
    Event,
    ExecutionResult,
    FlowContext,
)

from .process import Outcome, run_code

DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_LIMIT_MB = 512
MAX_TRACEBACK = 64 * 1024  # characters of the user's traceback kept
# `timeout` is also the engine's per-node timeout (a common setting): the child is
# stopped this much earlier so that this node's own NodeTimeout, not the engine's
# cancellation, reports it.
TIMEOUT_MARGIN = 0.1
SIGNATURE_HELP = "write `def main(input, nodes):` and return the node's output"


class CodeExecutor:
    node_type = "code"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        code = data.get("code")
        if not isinstance(code, str) or not code.strip():
            raise NodeError(f"the `code` parameter is empty; {SIGNATURE_HELP}", retryable=False)
        timeout = _number(data, "timeout", DEFAULT_TIMEOUT, minimum=0.1, maximum=3600)
        memory_limit_mb = int(
            _number(data, "memory_limit_mb", DEFAULT_MEMORY_LIMIT_MB, minimum=32, integer=True)
        )
        incoming = inputs.get("input")
        payload = {
            "code": code,
            "input": incoming.value if incoming is not None else None,
            "nodes": context.upstream(),
        }
        try:
            sent = json.dumps(payload, default=_plain).encode()
        except (TypeError, ValueError) as exc:
            raise NodeError(
                f"the Code node's input or upstream outputs cannot be sent as JSON: {exc}",
                retryable=False,
            ) from exc

        budget = timeout - min(TIMEOUT_MARGIN, timeout / 20)
        outcome = await run_code(sent, timeout=budget, memory_limit_mb=memory_limit_mb)
        logs = _logs(outcome)
        try:
            value = _result(outcome, timeout=timeout, memory_limit_mb=memory_limit_mb)
        except NodeError as exc:
            if logs:
                exc.details["logs"] = logs
            raise
        events = [Event("progress", {"logs": logs})] if logs else []
        return ExecutionResult(outputs={"output": value}, events=events)


def _result(outcome: Outcome, *, timeout: float, memory_limit_mb: int) -> Any:
    """The value main returned, or the error that explains why there is none."""
    if outcome.timed_out:
        raise NodeTimeout(
            f"code ran longer than {timeout:g} s; raise `timeout` or make it faster",
            retryable=False,
            details={"timeout": timeout},
        )
    document = _document(outcome.document)
    if document is not None and document.get("ok") is True:
        return document.get("result")
    if document is not None:
        message = str(document.get("message", "the code failed"))
        traceback = _clip(str(document.get("traceback") or ""))
        if document.get("kind") == "memory":
            raise CodeError(
                f"the code ran out of memory ({message}); it may use {memory_limit_mb} MB, "
                "the Python interpreter included: use less memory or raise `memory_limit_mb`",
                traceback=traceback,
            )
        raise CodeError(message, traceback=traceback)
    return _crash(outcome, timeout=timeout, memory_limit_mb=memory_limit_mb)


def _crash(outcome: Outcome, *, timeout: float, memory_limit_mb: int) -> Any:
    """The child ended without a result document."""
    code = outcome.returncode
    if code == -signal.SIGXCPU:
        raise NodeTimeout(
            f"code used more than {timeout:g} s of CPU time; raise `timeout` or make it faster",
            retryable=False,
            details={"timeout": timeout},
        )
    if outcome.document_overflow:
        raise CodeError(
            f"the code's result is larger than `memory_limit_mb` ({memory_limit_mb} MB); "
            "return less, or raise `memory_limit_mb`"
        )
    if code == -signal.SIGKILL:
        raise CodeError(
            "the code's process was killed (SIGKILL), most likely for using too much memory; "
            f"use less memory or lower `memory_limit_mb` (now {memory_limit_mb} MB) so that "
            "it fails with a MemoryError instead"
        )
    message = f"the code's process exited with code {code} without returning a result"
    if code is not None and code < 0:
        message = (
            f"the code's process was killed by {_signal_name(-code)} (exit code {code}) "
            "without returning a result"
        )
        if -code in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            message += (
                "; a library may have run out of memory: try raising `memory_limit_mb` "
                f"(now {memory_limit_mb} MB)"
            )
    tail = outcome.stderr_tail.strip()
    message += f"; its last output:\n{tail}" if tail else "; it printed nothing"
    raise CodeError(message)


def _document(raw: bytes) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        document = json.loads(raw)
    except ValueError:  # cut short: the child died while writing it
        return None
    return document if isinstance(document, dict) else None


def _logs(outcome: Outcome) -> str:
    if outcome.logs_truncated:
        return f"{outcome.logs}\n... [{outcome.logs_truncated} more bytes of output not kept]"
    return outcome.logs


def _clip(text: str) -> str:
    if len(text) <= MAX_TRACEBACK:
        return text
    return "... [traceback cut]\n" + text[-MAX_TRACEBACK:]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _number(
    data: dict[str, Any],
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float | None = None,
    integer: bool = False,
) -> float:
    value = data.get(name)
    if value is None:
        return default
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    bounds = f"at least {minimum:g}" + (f" and at most {maximum:g}" if maximum else "")
    kind = "a whole number" if integer else "a number"
    if (
        number is None
        or number != number  # NaN
        or number < minimum
        or (maximum is not None and number > maximum)
        or (integer and not number.is_integer())
    ):
        raise NodeError(
            f"`{name}` must be {kind} {bounds}; got {value!r}",
            retryable=False,
            details={"field": name},
        )
    return number


def _plain(value: Any) -> Any:
    """`json.dumps` hook for what may travel on wires; never fails on an odd upstream
    value the code may not even read."""
    if isinstance(value, DataValue):
        return value.value
    if isinstance(value, BinaryRef):
        return value.to_json()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": len(value)}
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


executor = CodeExecutor()
