"""What a run costs that does not use a feature: the fast paths of a plain run (no
secret, no pause, no recording) behave as the full ones, and a run in flight stays small.

Memory is counted with tracemalloc (deterministic); no test here measures time."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from pathlib import Path

import nodeloom
from nodeloom.engine.context import RunContext
from nodeloom.engine.outcome import Done
from nodeloom.plugins.registry import Registry
from nodeloom.testing.builders import chain, node

PACK = Path(__file__).parents[1] / "conformance" / "pack"


def three_nodes(seconds: float) -> nodeloom.Flow:
    registry = Registry.discover(paths=[str(PACK)], use_entry_points=False, use_environment=False)
    document = chain(
        node("start", "chat-start"), node("wait", "sleep", seconds=seconds), node("end", "merge")
    )
    return nodeloom.load(document, registry=registry)


def test_the_outcomes_the_run_loop_builds_by_position_have_the_fields_it_gives():
    # engine/execution.py and engine/run.py build these tuples without their __new__.
    assert Done._fields == (
        "outputs",
        "usage",
        "started",
        "delivery",
        "attempts",
        "record",
        "pinned",
    )
    assert len(RunContext._fields) == 11


def test_a_run_context_is_made_with_every_one_of_its_fields():
    execution = three_nodes(0).execution("hi", run_id="r1", chat_id="c1")
    context = execution.context
    assert len(context) == len(RunContext._fields)
    assert (context.run_id, context.chat_id, context.trigger) == ("r1", "c1", {"message": "hi"})
    assert context.checkpoints is None and context.continuation is None and context.human is None


async def test_a_plain_run_reports_its_outputs_state_and_numbered_events_as_before():
    sink = nodeloom.ListSink()
    result = await three_nodes(0).run("hi", sink=sink, state={"seen": 1})
    assert result.ok
    assert result.outputs["end"] == {"output": [{"message": "hi"}]}
    assert result.state == {"seen": 1} and result.steps == 3
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))
    assert [e.event_type for e in sink.events] == [
        "run_started",
        *["started", "completed"] * 3,
        "run_completed",
    ]


async def test_a_run_that_cannot_pause_is_not_kept_by_its_flow():
    flow = three_nodes(0)
    await flow.run("hi")
    assert flow.paused() == [] and flow._live is None


async def test_a_run_in_flight_holds_less_than_7_kb():
    # The 3-node run of the benchmark (docs/performance.md), 500 at once: 7.76 KB each
    # at 20c59b9, 8.72 KB before the per-run objects were trimmed, about 6 KB now.
    flow = three_nodes(0.05)
    runs = 500
    await asyncio.gather(*(flow.run("hi") for _ in range(runs)))  # warm
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        results = await asyncio.gather(*(flow.run("hi") for _ in range(runs)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(result.ok for result in results)
    per_run = (peak - start) / runs
    assert per_run < 7_000, f"{per_run:.0f} bytes per run in flight"
