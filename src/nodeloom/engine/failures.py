"""Every failure payload of a run: the JSON object an `error` event, `run_failed` and
`RunResult.error` carry (`{code, message, ...}`; docs/errors.md lists the codes).

A node's failure names the node (its name, type and id) in `message`, keeps the error's own
text in `cause`, and carries its details (a `NodeError`'s `details`, a `GraphError`'s
`errors`). The same shape serves a node that failed in the flow and one that could not be
built in phase 1.
"""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeloomError


def node_failure(
    exc: BaseException, node_id: str, node_name: str, node_type: str, *, building: bool = False
) -> dict[str, Any]:
    """A node's failure: code, a message naming the node, the cause and its details.
    `building`: it failed in phase 1 (`could not be built`, default code `build_failed`;
    the error's details stay out)."""
    if isinstance(exc, NodeloomError):
        details = exc.to_json()
        code, cause = details.pop("code"), details.pop("message")
        if building:
            details = {}
    else:
        details = {}
        code = "build_failed" if building else "node_failed"
        cause = f"{type(exc).__name__}: {exc}"
    what = "could not be built" if building else "failed"
    return {
        "code": code,
        "message": f"node '{node_name}' ({node_type}, id '{node_id}') {what}: {cause}",
        "cause": cause,
        "node_id": node_id,
        "node_name": node_name,
        "node_type": node_type,
        **details,
    }


def steps_exceeded(max_steps: int, node_id: str, node_name: str, node_type: str) -> dict[str, Any]:
    """The run executed more nodes than `RunSettings.max_steps` allows."""
    return {
        "code": "max_steps_exceeded",
        "message": f"the run exceeded {max_steps} node executions "
        f"(at '{node_name}'); raise --max-steps if this is expected",
        "node_id": node_id,
        "node_name": node_name,
        "node_type": node_type,
    }


def internal_error(exc: BaseException) -> dict[str, Any]:
    """An engine bug: the run fails with it instead of hanging."""
    return {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"}


def run_timeout(timeout: float) -> dict[str, Any]:
    """The run outlasted `RunSettings.timeout`."""
    return {
        "code": "run_timeout",
        "message": f"the run took longer than its timeout of {timeout:g} s; running nodes "
        "were cancelled",
    }


def handed_back() -> dict[str, Any]:
    """The worker running the run stopped (SIGTERM) before the run ended: drained (no
    node started after the stop), or released when its grace ran out."""
    return {
        "code": "handed_back",
        "message": "the worker running it stopped before it ended; it is resumable from its "
        "checkpoints",
    }
