"""Error modes, retries, timeouts, step limits and cancellation."""

import asyncio
import itertools

import pytest

from nodeloom import ListSink, RunSettings, RunStatus
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type


def failing_graph(on_error: str | None = None, **extra):
    data = {"message": "kaput"}
    if on_error:
        data["on_error"] = on_error
    return graph(
        node("start", "const", value="in"),
        {"id": "bad", "type": "fail", "data": {**data, "name": "Bad Step"}},
        node("after", "const", value="after"),
        node("sibling", "sleep", seconds=5),
        edge("start", "bad"),
        edge("bad", "after"),
        edge("start", "sibling"),
        **extra,
    )


async def test_stop_fails_the_run_naming_the_node_and_cancels_running_siblings(run):
    result, events = await run(failing_graph())
    assert result.status is RunStatus.FAILED
    error = result.error
    assert error["code"] == "node_failed"
    assert error["node_id"] == "bad" and error["node_name"] == "Bad Step"
    assert error["node_type"] == "fail"
    assert error["message"] == "node 'Bad Step' (fail, id 'bad') failed: ValueError: kaput"
    assert result.duration_ms < 2000, "the 5 s sibling must have been cancelled"
    assert "after" not in result.outputs and "sibling" not in result.outputs
    assert of_type(events, "run_failed")


def assert_cancelled_at_once(result, events, sibling: str) -> None:
    assert result.status is RunStatus.FAILED
    assert result.duration_ms < 1000, "the 5 s sibling must have been cancelled"
    assert sibling in result.state.get("cancelled", [])
    assert not [e for e in events if e.event_type == "completed" and e.node_id == sibling]
    error = of_type(events, "error")[0]  # the first failure (a Loop fails after its body)
    [failed] = of_type(events, "run_failed")
    assert failed.timestamp - error.timestamp < 0.5


async def test_stop_cancels_every_running_sibling_whichever_branch_fails(run):
    # The first root runs in the task that called the run, the second in a task of its
    # own: a failure in the second cancels the first all the same.
    doc = graph(node("sibling", "sleep", seconds=5), node("bad", "fail"))
    result, events = await run(doc)
    assert_cancelled_at_once(result, events, "sibling")


async def test_stop_inside_a_loop_body_cancels_the_bodys_running_siblings(run):
    inner = graph(node("sibling", "sleep", seconds=5), node("bad", "fail"))
    doc = graph(node("loop", "loop", items=[1], body=inner, output_node="sibling"))
    result, events = await run(doc)
    assert_cancelled_at_once(result, events, "loop/sibling")
    assert not of_type(events, "completed")


async def test_stop_cancels_a_loop_whose_body_is_still_running(run):
    inner = graph(node("sibling", "sleep", seconds=5))
    doc = graph(node("loop", "loop", items=[1], body=inner), node("bad", "fail"))
    result, events = await run(doc)
    assert_cancelled_at_once(result, events, "loop/sibling")
    assert not of_type(events, "completed")


async def test_continue_outputs_the_error_on_the_main_port_and_downstream_still_runs(run):
    doc = failing_graph("continue")
    doc["nodes"][3]["data"]["seconds"] = 0
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["Bad Step"]["output"]["error"]["cause"] == "ValueError: kaput"
    assert result.outputs["after"]["output"] == "after"
    [error_event] = of_type(events, "error", "bad")
    assert error_event.data["handled"] is True


async def test_error_output_sends_the_error_to_the_error_port_and_kills_the_others(run):
    doc = graph(
        node("start", "const", value="in"),
        node("bad", "fail", on_error="error_output"),
        node("on_ok", "const", value="ok"),
        node("on_error", "const", value="{{ $json.code }}"),
        edge("start", "bad"),
        edge("bad", "on_ok"),
        edge("bad", "on_error", "error"),
    )
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["bad"] == {"error": result.outputs["bad"]["error"]}
    assert result.outputs["on_error"]["output"] == "node_failed"
    assert of_type(events, "skipped", "on_ok")


async def test_retry_retries_a_failing_node_until_it_succeeds_and_reports_attempts(run):
    doc = graph(node("f", "flaky", failures=2, retry={"max_attempts": 3, "initial_interval": 0.01}))
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["f"]["output"] == 3
    retries = [e.data["retry"] for e in of_type(events, "progress", "f")]
    assert [r["attempt"] for r in retries] == [1, 2]


async def test_retry_gives_up_after_max_attempts_and_the_error_counts_them(run):
    doc = graph(node("f", "flaky", failures=5, retry={"max_attempts": 2, "initial_interval": 0.01}))
    result, events = await run(doc)
    assert result.status is RunStatus.FAILED
    [error] = of_type(events, "error", "f")
    assert error.data["attempts"] == 2


async def test_retry_backoff_grows_by_the_factor_and_is_capped_by_max_interval(run):
    policy = {"max_attempts": 5, "initial_interval": 0.02, "backoff_factor": 3, "max_interval": 0.1}
    doc = graph(node("f", "flaky", failures=4, retry=policy))
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    delays = [e.data["retry"]["next_in"] for e in of_type(events, "progress", "f")]
    assert delays == pytest.approx([0.02, 0.06, 0.1, 0.1])
    stamps = [e.timestamp for e in of_type(events, "progress", "f")]
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert all(gap >= delay * 0.9 for gap, delay in zip(gaps, delays, strict=False))


async def test_retry_on_retries_only_the_listed_error_codes(run):
    doc = graph(
        node(
            "f",
            "flaky",
            failures=1,
            code="permanent",
            retry={"max_attempts": 3, "initial_interval": 0.01, "retry_on": ["rate_limited"]},
        )
    )
    result, events = await run(doc)
    assert result.status is RunStatus.FAILED
    assert not of_type(events, "progress", "f")
    assert result.error["code"] == "permanent"


async def test_a_node_running_longer_than_its_timeout_fails_with_node_timeout(run):
    doc = graph(node("slow", "sleep", seconds=5, timeout=0.05))
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "node_timeout"
    assert "timeout of 0.05 s" in result.error["message"]
    assert result.duration_ms < 1000


async def test_a_run_longer_than_its_timeout_fails_and_cancels_its_running_nodes(run, registry):
    doc = graph(node("slow", "sleep", seconds=5), node("other", "sleep", seconds=5))
    result, events = await run(doc, timeout=0.1)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "run_timeout"
    assert result.duration_ms < 1000
    assert of_type(events, "run_failed")


async def test_max_steps_caps_the_number_of_node_executions(run):
    doc = graph(*[node(f"n{i}", "const", value=i) for i in range(10)])
    result, _ = await run(doc, max_steps=4)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "max_steps_exceeded"
    assert result.steps == 5


async def test_cancelling_a_run_cancels_its_running_nodes_and_emits_run_cancelled(run):
    doc = graph(node("a", "sleep", seconds=5), node("b", "sleep", seconds=5))
    flow = run.load(doc)
    sink = ListSink()
    task = asyncio.create_task(flow.run(sink=sink, settings=RunSettings()))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert of_type(sink.events, "run_cancelled")
    assert not of_type(sink.events, "completed")
    assert len(of_type(sink.events, "started")) == 2


async def test_a_node_that_fails_under_stop_lets_no_further_node_start(run):
    doc = graph(
        node("bad", "fail"),
        node("next", "const", value=1),
        edge("bad", "next"),
    )
    _, events = await run(doc)
    assert not of_type(events, "started", "next")
