"""Incremental runs and the event protocol."""

import pytest

from nodeloom import GraphError, RunStatus
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type


def pipeline():
    return graph(
        node("a", "const", value=1),
        node("b", "const", value="{{ $json + 1 }}"),
        node("c", "const", value="{{ $json * 10 }}"),
        node("side", "const", value="side"),
        edge("a", "b"),
        edge("b", "c"),
        edge("a", "side"),
    )


async def test_a_target_run_executes_only_the_target_and_its_ancestors(run):
    result, events = await run(pipeline(), target="b")
    assert result.status is RunStatus.COMPLETED
    assert set(result.outputs) == {"a", "b"}
    assert {e.node_id for e in of_type(events, "started")} == {"a", "b"}


async def test_a_from_run_reuses_supplied_upstream_outputs_and_runs_the_descendants(run):
    result, events = await run(pipeline(), from_node="b", outputs={"a": {"output": 41}})
    assert result.status is RunStatus.COMPLETED
    assert result.outputs == {"b": {"output": 42}, "c": {"output": 420}}
    assert {e.node_id for e in of_type(events, "started")} == {"b", "c"}


async def test_a_from_run_without_the_outputs_it_needs_is_invalid_and_names_them(run):
    with pytest.raises(GraphError) as caught:
        await run(pipeline(), from_node="b", outputs={})
    [issue] = caught.value.issues
    assert issue.code == "missing_outputs" and issue.node_id == "a"


async def test_an_incremental_run_naming_an_unknown_node_is_invalid(run):
    with pytest.raises(GraphError) as caught:
        await run(pipeline(), target="nope")
    assert caught.value.issues[0].code == "unknown_node"


async def test_supplied_outputs_with_no_fired_port_make_the_dependent_branch_dead(run):
    result, events = await run(pipeline(), from_node="b", outputs={"a": {}})
    assert result.outputs == {}
    assert of_type(events, "skipped", "b") and of_type(events, "skipped", "c")


async def test_every_event_carries_run_id_a_contiguous_sequence_and_a_timestamp(run):
    result, events = await run(pipeline())
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.run_id for e in events} == {result.run_id}
    assert all(e.timestamp > 0 for e in events)
    assert events[0].event_type == "run_started" and events[-1].event_type == "run_completed"


async def test_node_events_name_the_node_and_completed_carries_outputs_and_duration(run):
    _, events = await run(pipeline())
    for event in events:
        if event.event_type in ("started", "completed", "skipped", "error"):
            assert event.node_id and event.node_name and event.node_type
    [done] = of_type(events, "completed", "c")
    assert done.data["outputs"] == {"output": 20}
    assert done.data["duration_ms"] >= 0


async def test_events_serialise_to_the_documented_json_shape(run):
    _, events = await run(pipeline())
    line = of_type(events, "completed", "a")[0].to_json()
    assert set(line) == {
        "type",
        "seq",
        "run_id",
        "event_type",
        "node_id",
        "node_name",
        "node_type",
        "data",
        "timestamp",
    }
    assert line["type"] == "event"


async def test_stream_yields_events_as_they_happen_and_ends_with_the_run_event(run):
    flow = run.load(pipeline())
    seen = [event async for event in flow.stream("hi")]
    assert seen[0].event_type == "run_started"
    assert seen[-1].event_type == "run_completed"
    assert len(of_type(seen, "completed")) == 4
