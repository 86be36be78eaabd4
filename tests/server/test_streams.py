"""The resumable event stream in-process, with the store made to lag the live channel
(as the recorder's background writer makes it): overlap is de-duplicated by seq, and
nothing is missed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nodeloom.plugins.contract import Event
from nodeloom.server.broadcast import Broadcaster, Channel
from nodeloom.server.streams import event_name, frame, run_events
from nodeloom.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(f"sqlite:///{tmp_path / 'runs.db'}", blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()


def event(run_id: str, seq: int, event_type: str = "started") -> Event:
    return Event(event_type, {}, "n", "N", "sleep", run_id, seq)


async def collect(stream: AsyncIterator[Event], into: list[int]) -> None:
    async for item in stream:
        into.append(item.seq)


async def test_events_ahead_of_the_store_come_from_the_channel_once(store: Store):
    run = await store.create_run(document={"nodes": [], "edges": []})
    broadcaster = Broadcaster()
    channel = Channel(broadcaster, run.id)
    for seq in range(1, 6):
        channel.emit(event(run.id, seq))
    await store.record_events(run.id, [event(run.id, seq) for seq in range(1, 4)])  # lags

    got: list[int] = []
    reader = asyncio.create_task(collect(run_events(store, broadcaster, run.id, 2), got))
    await asyncio.sleep(0.05)
    assert got == [3, 4, 5]
    channel.emit(event(run.id, 6))
    channel.emit(event(run.id, 7, "run_completed"))
    await store.record_events(run.id, [event(run.id, seq) for seq in range(4, 8)])
    await store.finish_run(run.id, "completed")
    channel.close()
    await asyncio.wait_for(reader, 5)
    assert got == [3, 4, 5, 6, 7]


async def test_a_resumed_launch_continues_after_what_the_store_holds(store: Store):
    run = await store.create_run(document={"nodes": [], "edges": []})
    await store.record_events(run.id, [event(run.id, seq) for seq in range(1, 5)])
    broadcaster = Broadcaster()
    channel = Channel(broadcaster)  # joins on its first event, as a resume does
    channel.emit(event(run.id, 5, "run_resumed"))
    channel.emit(event(run.id, 6))
    assert broadcaster.channel(run.id) is channel

    got: list[int] = []
    reader = asyncio.create_task(collect(run_events(store, broadcaster, run.id, 0), got))
    await asyncio.sleep(0.05)
    channel.close()  # (the store has them by then; here it does not: the channel's copy counts)
    await asyncio.wait_for(reader, 5)
    assert got == [1, 2, 3, 4, 5, 6]
    assert broadcaster.channel(run.id) is None


async def test_a_run_live_elsewhere_is_followed_in_the_store_until_it_ends(store: Store):
    run = await store.create_run(document={"nodes": [], "edges": []})
    await store.record_events(run.id, [event(run.id, 1, "run_started")])
    got: list[int] = []
    reader = asyncio.create_task(collect(run_events(store, Broadcaster(), run.id, 0), got))
    await asyncio.sleep(0.1)
    assert got == [1]
    await store.record_events(run.id, [event(run.id, 2), event(run.id, 3, "run_completed")])
    await store.finish_run(run.id, "completed")
    await asyncio.wait_for(reader, 5)
    assert got == [1, 2, 3]


def test_frames_carry_the_seq_as_id_and_the_chat_event_name():
    token = Event("progress", {"token": "Hi"}, "a", "A", "llm-completion", "r", 7)
    assert frame(token).startswith("id: 7\nevent: RunContent\ndata: {")
    assert frame(token).endswith("}\n\n")
    assert event_name(Event("progress", {"iteration": 1, "of": 2})) == "progress"
    assert event_name(Event("error", {})) == "RunError"
    assert event_name(Event("waiting", {})) == "waiting"
    assert event_name(Event("run_failed", {})) == "run_failed"
