"""Following a run a worker executes (a server started with --queue): its events, read
from the store as Postgres notifies they are written, go to a sink (a chat turn); its
outcome is rebuilt from the store once it has ended or paused (a sync webhook, a chat
turn wait for it)."""

from __future__ import annotations

import asyncio
from typing import Any

from nodeloom.engine.events import EventSink
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.fleet.signals import RunSignals
from nodeloom.server.broadcast import Broadcaster
from nodeloom.server.streams import run_events
from nodeloom.store import Store

INTERRUPTED_WAIT_SECONDS = 300.0
_STATUSES = {status.value: status for status in RunStatus}


async def follow(
    store: Store,
    broadcaster: Broadcaster,
    signals: RunSignals | None,
    run_id: str,
    sink: EventSink | None = None,
) -> RunResult:
    """Every event of the run to `sink` until it ends or pauses; then its outcome. With
    notifications (a queue deployment), a run interrupted on the way (its worker died or
    stopped) is followed on while the fleet takes it up again, for up to
    INTERRUPTED_WAIT_SECONDS."""
    last = 0
    waiting: list[dict[str, Any]] = []
    while True:
        async for event in run_events(store, broadcaster, run_id, last, signals):
            last = event.seq
            if event.event_type == "run_paused":
                waiting = list((event.data or {}).get("waiting") or [])
            if sink is not None:
                sink.emit(event)
        status = (await store.get_run(run_id)).status
        if signals is None or status != "interrupted":
            return await outcome(store, run_id, waiting)
        if not await _taken_up_again(store, signals, run_id):
            return await outcome(store, run_id, waiting)


async def _taken_up_again(store: Store, signals: RunSignals, run_id: str) -> bool:
    """Whether the run, if interrupted, runs again within INTERRUPTED_WAIT_SECONDS."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + INTERRUPTED_WAIT_SECONDS
    with signals.subscribe(run_id) as changed:
        while loop.time() < deadline:
            changed.clear()
            if (await store.get_run(run_id)).status != "interrupted":
                return True  # its events from here on are read by the caller
            await changed.wait(min(5.0, max(deadline - loop.time(), 0.0)))
    return False


async def outcome(store: Store, run_id: str, waiting: list[dict[str, Any]]) -> RunResult:
    """The RunResult of an ended (or paused) run, from its record: status, error, usage
    and the outputs of its node executions (the last of each node)."""
    record = await store.get_run(run_id)
    outputs: dict[str, dict[str, Any]] = {}
    for row in await store.node_executions(run_id):
        if row.status == "completed" and row.outputs is not None and row.node_name:
            outputs[row.node_name] = dict(row.outputs)
    status = _STATUSES.get(record.status, RunStatus.FAILED)
    error = record.error
    if record.status == "interrupted":
        error = error or {"code": "interrupted", "message": f"run {run_id} was interrupted"}
    return RunResult(
        run_id,
        status,
        outputs,
        error=error,
        duration_ms=record.duration_ms or 0.0,
        steps=record.steps or 0,
        usage=dict(record.usage or {}),
        waiting=waiting if status is RunStatus.PAUSED else [],
    )
