"""Wait: a short wait sleeps in the process; a run without a timer service to wake it
(Flow.run, `nodeloom run`) never pauses on a longer one; its parameters are checked."""

from __future__ import annotations

import time

import pytest

import nodeloom
from nodeloom.errors import GraphError
from nodeloom.testing.builders import chain, node


def waits(**parameters: object) -> dict:
    return chain(node("start", "chat-start"), node("pause", "wait", name="Pause", **parameters))


async def test_a_short_wait_sleeps_and_passes_its_input_on() -> None:
    async with nodeloom.load(waits(seconds=0.2)) as flow:
        began = time.monotonic()
        result = await flow.run("hi")
    assert result.status == "completed" and time.monotonic() - began >= 0.2
    assert result.outputs["Pause"]["output"] == {"message": "hi"}


@pytest.mark.slow
async def test_a_long_wait_in_a_run_no_timer_wakes_waits_in_the_process() -> None:
    async with nodeloom.load(waits(seconds=2.5)) as flow:
        began = time.monotonic()
        result = await flow.run("hi")
    assert result.status == "completed" and time.monotonic() - began >= 2.5


async def test_a_wait_until_a_past_time_does_not_wait() -> None:
    async with nodeloom.load(waits(until="2020-01-01T00:00:00Z")) as flow:
        result = await flow.run("hi")
    assert result.status == "completed"


async def test_a_wait_until_a_text_that_is_no_time_fails_naming_the_node_and_the_fix() -> None:
    async with nodeloom.load(waits(until="{{ $json.message }}")) as flow:
        result = await flow.run("tomorrow")
    assert result.status == "failed"
    message = result.error["message"]
    assert "'Pause'" in message and "`until`" in message and "ISO 8601" in message


@pytest.mark.parametrize("parameters", [{}, {"seconds": 1, "until": "2026-01-01T00:00:00Z"}])
def test_a_wait_needs_exactly_one_of_seconds_and_until(parameters: dict) -> None:
    with pytest.raises(GraphError) as raised:
        nodeloom.load(waits(**parameters))
    (issue,) = raised.value.issues
    assert issue.node_id == "pause" and issue.field == "seconds" and "either" in issue.message
