"""Control of runs between processes: claiming a run to resume it, and asking its owner to
cancel it, on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from nodeloom.store import NotFoundError, RunStateError, Store, StoreError


async def test_a_paused_run_is_claimed_by_this_process(store: Store):
    run = await store.create_run(status="paused", owner_pid=1, owner_host="elsewhere")
    await store.update_run(run.id, heartbeat_at=datetime.now(UTC) - timedelta(hours=1))
    claimed = await store.claim_run(run.id)
    assert claimed.status == "running"
    assert (claimed.owner_pid, claimed.owner_host) == (os.getpid(), socket.gethostname())
    assert claimed.heartbeat_at > datetime.now(UTC) - timedelta(minutes=1)
    assert claimed == await store.get_run(run.id)


async def test_an_interrupted_run_is_claimed_and_loses_what_described_its_end(store: Store):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    run = await store.create_run(owner_pid=child.pid, trigger={"m": 1})
    (interrupted,) = await store.find_interrupted()
    assert interrupted.finished_at is not None and interrupted.error is not None
    claimed = await store.claim_run(run.id, owner_pid=42, owner_host="worker-2")
    assert (claimed.status, claimed.owner_pid, claimed.owner_host) == ("running", 42, "worker-2")
    assert (claimed.finished_at, claimed.error, claimed.duration_ms) == (None, None, None)
    assert claimed.trigger == {"m": 1}


async def test_a_queued_run_starts_when_it_is_claimed_and_a_resumed_one_keeps_its_start(
    store: Store,
):
    queued = await store.create_run(status="queued")
    assert queued.started_at is None
    claimed = await store.claim_run(queued.id, states=("queued",))
    assert claimed.started_at is not None and claimed.started_at >= queued.created_at
    await store.finish_run(queued.id, "completed")
    assert (await store.get_run(queued.id)).duration_ms < 60_000
    paused = await store.create_run(status="running")
    await store.update_run(paused.id, status="paused")
    resumed = await store.claim_run(paused.id)
    assert resumed.started_at == paused.started_at


async def test_a_run_in_another_state_is_refused_naming_its_status(store: Store):
    run = await store.create_run()
    await store.finish_run(run.id, "completed")
    with pytest.raises(RunStateError) as caught:
        await store.claim_run(run.id)
    assert str(caught.value) == (
        f"run {run.id} is completed; only paused or interrupted runs can be resumed"
    )
    assert isinstance(caught.value, StoreError) and caught.value.code == "run_state"
    assert (caught.value.status, caught.value.required) == ("completed", ("paused", "interrupted"))
    assert (await store.get_run(run.id)).status == "completed"


async def test_claim_run_takes_the_states_it_is_given(store: Store):
    run = await store.create_run()
    await store.finish_run(run.id, "failed", error={"code": "boom"})
    claimed = await store.claim_run(run.id, states=["failed", "interrupted", "paused"])
    assert (claimed.status, claimed.error) == ("running", None)
    with pytest.raises(RunStateError, match="only failed, interrupted or paused runs"):
        await store.claim_run(run.id, states=("failed", "interrupted", "paused"))
    with pytest.raises(ValueError, match="'sleeping' is not one of: running, paused"):
        await store.claim_run(run.id, states=("sleeping",))


async def test_claiming_an_unknown_run_raises_not_found(store: Store):
    with pytest.raises(NotFoundError, match="nope"):
        await store.claim_run("nope")


async def test_of_concurrent_claims_of_one_run_exactly_one_wins(store: Store):
    for _ in range(5):
        run = await store.create_run(status="paused")
        results = await asyncio.gather(
            *(store.claim_run(run.id, owner_pid=pid) for pid in range(100, 108)),
            return_exceptions=True,
        )
        won = [result for result in results if not isinstance(result, BaseException)]
        lost = [result for result in results if isinstance(result, BaseException)]
        assert len(won) == 1 and len(lost) == 7
        assert all(isinstance(error, RunStateError) for error in lost)
        assert (await store.get_run(run.id)).owner_pid == won[0].owner_pid


async def test_a_cancel_request_is_recorded_once_and_polled(store: Store):
    running = await store.create_run()
    paused = await store.create_run(status="paused")
    assert await store.cancel_requested(running.id) is False
    first = await store.request_cancel(running.id)
    assert first.status == "running" and first.cancel_requested_at is not None
    assert await store.cancel_requested(running.id) is True
    again = await store.request_cancel(running.id)
    assert again.cancel_requested_at == first.cancel_requested_at  # the first request's time
    assert (await store.request_cancel(paused.id)).cancel_requested_at is not None
    assert (await store.get_run(running.id)).to_json()["cancel_requested_at"] is not None


async def test_a_finished_run_cannot_be_asked_to_cancel(store: Store):
    run = await store.create_run()
    await store.finish_run(run.id, "failed")
    with pytest.raises(RunStateError, match=r"is failed; only running or paused runs can be"):
        await store.request_cancel(run.id)
    assert await store.cancel_requested(run.id) is False
    for call in (store.request_cancel("nope"), store.cancel_requested("nope")):
        with pytest.raises(NotFoundError, match="nope"):
            await call


async def test_the_cancel_requests_of_many_runs_are_read_at_once(store: Store):
    asked, other, finished = [await store.create_run() for _ in range(3)]
    await store.request_cancel(asked.id)
    await store.request_cancel(finished.id)
    await store.finish_run(finished.id, "cancelled")
    ids = [asked.id, other.id, finished.id, "nope"]
    assert await store.cancels_requested(ids) == {asked.id, finished.id}
    assert await store.cancels_requested([]) == set()
