"""A recorded run's task: its execution, made before the task (`execution`: no closure nor
extra coroutine per run), and waiting for its end without owning it (`ended`:
`asyncio.shield(task)` with fewer objects per run: no outer future, closures nor context
copies); and its end, written with its last records (and its creation, if not written
yet) in one write (`end`). For a process that keeps a thousand runs in flight
(docs/performance.md, "Recorded runs")."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nodeloom.runs.timers import deadlines

if TYPE_CHECKING:
    from nodeloom.engine.execution import Execution
    from nodeloom.engine.flow import Flow
    from nodeloom.engine.live import LiveRun
    from nodeloom.engine.result import RunResult
    from nodeloom.runs.recorder import Recorder
    from nodeloom.store import RunRecord, Store

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


async def end(store: Store, recorder: Recorder, run_id: str, status: str, **fields: Any) -> None:
    """End a recorded run: its last records (what `recorder` had not written yet), its
    end (`fields` as `Store.end_run` takes them) and, if no write has carried it yet, its
    creation, in one write. Raises the store's error if the run was never created (its
    creation's write failed, e.g. its id was taken): there is no run to end."""
    events, nodes = await recorder.detach_quietly()
    if recorder.error is not None and recorder.created is not None:
        raise recorder.error
    try:
        await store.end_run(
            run_id, status, events=events, nodes=nodes, created=recorder.created, **fields
        )
    except BaseException as exc:
        recorder.ended(exc)
        raise
    recorder.ended()


async def unrecorded(store: Store, recorder: Recorder, run_id: str) -> BaseException:
    """A run whose records could no longer be written (`recorder.error`): recorded
    `interrupted` (error `store_failed`) if it was ever created. Returns the error, for
    the caller to raise."""
    error = recorder.error
    assert error is not None
    if recorder.created is None:  # else its creation failed: there is no run to end
        await recorder.close_quietly()
        await store.finish_run(
            run_id, "interrupted", error={"code": "store_failed", "message": str(error)}
        )
    return error


async def pause(store: Store, live: LiveRun, result: RunResult, hold: bool) -> None:
    """Record that a run paused (everything it handed over written first, its deadlines
    before its status: a timer needs both). With `hold` (and no deadline: a run with one
    is the timer service's to wake) it stays live here, for an answer; else let go."""
    recorder = live.owner
    await recorder.flush()
    wakes = deadlines(result.waiting)
    await store.set_wakes(live.run_id, wakes)
    await store.update_run(live.run_id, status="paused", steps=result.steps)
    if hold and not wakes:
        live.paused = True
    else:
        assert live.execution is not None
        await live.execution.release()
        await recorder.close_quietly()
