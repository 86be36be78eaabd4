"""A recorded run's task: its execution, made before the task (`execution`: no closure nor
extra coroutine per run), and waiting for its end without owning it (`ended`:
`asyncio.shield(task)` with fewer objects per run: no outer future, closures nor context
copies). For a process that keeps a thousand runs in flight (docs/performance.md,
"Recorded runs")."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nodeloom.engine.execution import Execution
    from nodeloom.engine.flow import Flow
    from nodeloom.runs.recorder import Recorder
    from nodeloom.store import RunRecord

_QUIET = contextvars.Context()  # for a callback that reads no context variable


def ended(task: asyncio.Task[Any]) -> asyncio.Future[None]:
    """A future resolved when `task` ends, whichever way. A caller cancelled while awaiting
    it cancels only the future, never the task (read the outcome with `task.result()`)."""
    waiter: asyncio.Future[None] = task.get_loop().create_future()
    task.add_done_callback(functools.partial(_release, waiter), context=_QUIET)
    return waiter


def _release(waiter: asyncio.Future[None], _task: object) -> None:
    if not waiter.done():  # not cancelled with its caller meanwhile
        waiter.set_result(None)


def execution(
    flow: Flow, record: RunRecord, recorder: Recorder, flows: Any, arguments: dict[str, Any]
) -> Execution:
    """The execution of `flow` as the run `record`, recorded by `recorder` (its sink and
    checkpoints), with `flows` for its child runs. Raises GraphError for invalid
    arguments."""
    return flow.execution(
        run_id=record.id,
        chat_id=record.chat_id,
        sink=recorder,
        checkpoints=recorder,
        # A flow of the service's cache has them already (not one copy per run).
        services=flow.services
        if flow.services.flows is flows
        else replace(flow.services, flows=flows),
        **arguments,
    )
