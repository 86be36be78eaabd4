"""Wait: a short wait sleeps; a longer one waits through `wait_for_input` with a deadline
(`InputRequest.wake_at`), so that a recorded run pauses and is let go, and the server's
timer service resumes it when the deadline passes (docs/automations.md)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.nodes.flow.wait.definition import SLEEP_UNDER
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest


class WaitExecutor:
    node_type = "wait"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        incoming = inputs.get("input")
        wake_at = wake_time(data, context)
        remaining = wake_at - time.time()
        if remaining <= SLEEP_UNDER:
            await asyncio.sleep(max(remaining, 0.0))
        else:
            until = datetime.fromtimestamp(wake_at, UTC).isoformat()
            request = InputRequest("wait", f"Waiting until {until}", wake_at=wake_at)
            with contextlib.suppress(TimeoutError):  # the deadline; an answer ends it early
                await context.wait_for_input(request)
        return ExecutionResult({"output": incoming})


def wake_time(data: dict[str, Any], context: FlowContext) -> float:
    """Epoch seconds the wait ends at."""
    seconds, until = data.get("seconds"), data.get("until")
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise _invalid(context, "seconds", seconds, "a number of seconds >= 0, e.g. 30")
        return time.time() + float(seconds)
    if isinstance(until, datetime):
        moment = until
    elif isinstance(until, str) and until.strip():
        try:
            moment = datetime.fromisoformat(until.strip())
        except ValueError:
            raise _invalid(
                context, "until", until, "an ISO 8601 time, e.g. 2026-12-01T09:00:00Z"
            ) from None
    else:
        raise _invalid(context, "until", until, "`seconds` or an ISO 8601 time in `until`")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _invalid(context: FlowContext, field: str, got: Any, fix: str) -> NodeError:
    return NodeError(
        f"Wait '{context.node_name}' (id '{context.node_id}'): `{field}` got {got!r}; give {fix}.",
        code="invalid_parameter",
        retryable=False,
        details={"field": field},
    )


executor = WaitExecutor()
