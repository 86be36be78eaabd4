"""Run changes across processes on Postgres: a write of a run's events, a change of its
status and a cancel request notify at commit; a reader of that run wakes at once. A
process listens to run changes only while one of its readers follows a run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nodeloom.fleet.signals import RunSignals
from nodeloom.plugins.contract import Event
from nodeloom.store import RunStateError, Store


@pytest.fixture
async def store(database: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(database, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_write_of_a_runs_events_wakes_its_reader_and_no_other(store: Store):
    assert store.listen_url is not None
    signals = RunSignals(store.listen_url)
    await signals.start()
    try:
        assert signals.connected.is_set()
        run = await store.create_run(document={"nodes": [], "edges": []})
        other = await store.create_run(document={"nodes": [], "edges": []})
        with signals.subscribe(run.id) as mine, signals.subscribe(other.id) as theirs:
            await asyncio.wait_for(signals.following.wait(), 5.0)
            mine.clear()
            theirs.clear()
            began = time.monotonic()
            event = Event("run_started", {}, run_id=run.id, seq=1)
            await store.write_batch(run.id, events=[event])
            assert await mine.wait(5.0)
            assert time.monotonic() - began < 1.0  # notified, not polled
            assert not await theirs.wait(0.3)
            mine.clear()
            await store.finish_run(run.id, "completed")
            assert await mine.wait(5.0)
    finally:
        await signals.aclose()


async def test_a_claim_wakes_its_reader_and_a_refused_claim_does_not(store: Store):
    assert store.listen_url is not None
    signals = RunSignals(store.listen_url)
    await signals.start()
    try:
        run = await store.create_run(document={"nodes": [], "edges": []}, status="queued")
        with signals.subscribe(run.id) as mine:
            await asyncio.wait_for(signals.following.wait(), 5.0)
            mine.clear()
            claimed = await store.claim_run(run.id, states=("queued",))
            assert claimed.status == "running" and claimed.started_at is not None
            assert claimed.started_at.tzinfo is not None
            assert await mine.wait(5.0)
            mine.clear()
            with pytest.raises(RunStateError, match="running"):
                await store.claim_run(run.id, states=("queued",))
            assert not await mine.wait(0.3)
    finally:
        await signals.aclose()


async def test_a_cancel_request_reaches_the_cancel_listener(store: Store):
    assert store.listen_url is not None
    asked: asyncio.Queue[str] = asyncio.Queue()
    signals = RunSignals(store.listen_url, on_cancel=asked.put_nowait)
    await signals.start()
    try:
        run = await store.create_run(document={"nodes": [], "edges": []})
        await store.request_cancel(run.id)
        assert await asyncio.wait_for(asked.get(), 5.0) == run.id
    finally:
        await signals.aclose()


async def test_a_process_listens_to_run_changes_only_while_a_reader_follows_a_run(
    store: Store,
):
    assert store.listen_url is not None
    signals = RunSignals(store.listen_url)
    await signals.start()
    try:
        assert signals.connected.is_set() and not signals.following.is_set()
        run = await store.create_run(document={"nodes": [], "edges": []})
        with signals.subscribe(run.id):
            await asyncio.wait_for(signals.following.wait(), 5.0)
            with signals.subscribe(run.id):  # a second reader: still one LISTEN
                assert signals.following.is_set()
            assert signals.following.is_set()
        await _until(lambda: not signals.following.is_set())
        with signals.subscribe(run.id) as again:  # and again for the next reader
            await asyncio.wait_for(signals.following.wait(), 5.0)
            again.clear()
            await store.write_batch(run.id, events=[Event("run_started", {}, run_id=run.id, seq=1)])
            assert await again.wait(5.0)
    finally:
        await signals.aclose()


async def test_a_change_committed_before_the_listen_took_effect_still_wakes_the_reader(
    store: Store,
):
    assert store.listen_url is not None
    signals = RunSignals(store.listen_url)
    await signals.start()
    try:
        run = await store.create_run(document={"nodes": [], "edges": []})
        with signals.subscribe(run.id) as mine:
            mine.clear()  # the reader reads the store here, then waits
            await store.write_batch(run.id, events=[Event("run_started", {}, run_id=run.id, seq=1)])
            assert await mine.wait(5.0)  # the LISTEN's start woke it: it reads again
            assert signals.following.is_set()
    finally:
        await signals.aclose()


async def test_a_worker_listens_to_cancels_and_never_to_run_changes(store: Store):
    assert store.listen_url is not None
    asked: asyncio.Queue[str] = asyncio.Queue()
    signals = RunSignals(store.listen_url, on_cancel=asked.put_nowait)
    await signals.start()
    try:
        run = await store.create_run(document={"nodes": [], "edges": []})
        await store.write_batch(run.id, events=[Event("run_started", {}, run_id=run.id, seq=1)])
        await store.request_cancel(run.id)
        assert await asyncio.wait_for(asked.get(), 5.0) == run.id
        assert not signals.following.is_set()
    finally:
        await signals.aclose()


async def _until(condition, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "not within the time limit"
        await asyncio.sleep(0.02)


async def test_sqlite_has_no_listen_url(tmp_path: Path):
    async with await Store.open(f"sqlite:///{tmp_path / 'db'}") as store:
        assert store.listen_url is None
