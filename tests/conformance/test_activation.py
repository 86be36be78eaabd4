"""Activation `each`: nodes that fire on every arriving value, and bounded cycles."""

import pytest

from nodeloom import GraphError, RunStatus
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type


async def test_an_each_node_runs_once_per_value_that_arrives(run):
    doc = graph(
        node("a", "const", value="A"),
        node("b", "const", value="B"),
        node("echo", "const", value="got {{ $json }}", activation="each"),
        edge("a", "echo"),
        edge("b", "echo"),
    )
    result, events = await run(doc)
    runs = [e.data["outputs"]["output"] for e in of_type(events, "completed", "echo")]
    assert sorted(runs) == ["got A", "got B"]
    assert result.outputs["echo"]["output"] == runs[-1], "outputs hold the latest execution"


async def test_a_dead_edge_into_an_each_node_is_ignored_not_skipped(run):
    doc = graph(
        node("start", "const", value=1),
        node("check", "route", port="a"),
        node("echo", "const", value="ran", activation="each"),
        edge("start", "check"),
        edge("check", "echo", "b"),
        edge("check", "echo", "a"),
    )
    _, events = await run(doc)
    assert len(of_type(events, "completed", "echo")) == 1
    assert not of_type(events, "skipped", "echo")


def counter_cycle(limit: int):
    """count -> check -> (again: back to count) | (done: exit)."""
    return graph(
        node("seed", "const", value=0),
        node("count", "const", value="{{ $json + 1 }}", activation="each"),
        node(
            "check",
            "switch",
            activation="each",
            cases=[{"field": "", "operator": "lessThan", "value": limit}],
        ),
        node("exit", "const", value="finished at {{ $json }}", activation="each"),
        edge("seed", "count"),
        edge("count", "check"),
        edge("check", "count", "case-0"),
        edge("check", "exit", "default"),
    )


async def test_a_cycle_of_each_nodes_repeats_until_a_branch_leaves_it(run):
    result, events = await run(counter_cycle(3))
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["exit"]["output"] == "finished at 3"
    assert len(of_type(events, "completed", "count")) == 3


async def test_a_cycle_is_bounded_by_the_step_limit(run):
    result, _ = await run(counter_cycle(10_000), max_steps=50)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "max_steps_exceeded"


def test_a_cycle_through_a_join_node_is_refused_naming_the_cycle(run):
    doc = counter_cycle(3)
    doc["nodes"][1]["data"].pop("activation")
    with pytest.raises(GraphError) as caught:
        run.load(doc)
    codes = {i.code for i in caught.value.issues}
    assert "cycle" in codes
    cycle = next(i for i in caught.value.issues if i.code == "cycle")
    assert "'count'" in cycle.message and "activation is `each`" in cycle.message


def test_an_each_node_cannot_feed_a_join_node(run):
    doc = graph(node("a", "const", value=1, activation="each"), node("b", "merge"), edge("a", "b"))
    with pytest.raises(GraphError) as caught:
        run.load(doc)
    [issue] = caught.value.issues
    assert issue.code == "activation_mismatch" and issue.node_id == "b"


async def test_an_each_node_may_loop_on_itself(run):
    doc = graph(
        node("seed", "const", value=0),
        node(
            "step",
            "switch",
            activation="each",
            cases=[{"field": "", "operator": "lessThan", "value": 2}],
        ),
        node("inc", "const", value="{{ $json + 1 }}", activation="each"),
        node("done", "const", value="{{ $json }}", activation="each"),
        edge("seed", "step"),
        edge("step", "inc", "case-0"),
        edge("inc", "step"),
        edge("step", "done", "default"),
    )
    result, _ = await run(doc)
    assert result.outputs["done"]["output"] == 2


async def test_the_graph_can_set_a_default_step_limit(run):
    doc = counter_cycle(10_000)
    doc["limits"] = {"max_steps": 30}
    flow = run.load(doc)
    result = await flow.run()
    assert result.error["code"] == "max_steps_exceeded"
    assert "30 node executions" in result.error["message"]


async def test_a_run_from_a_node_delivers_supplied_outputs_to_each_nodes(run):
    doc = graph(
        node("a", "const", value=1),
        node("echo", "const", value="got {{ $json }}", activation="each"),
        edge("a", "echo"),
    )
    result, events = await run(doc, from_node="echo", outputs={"a": {"output": 41}})
    assert result.outputs == {"echo": {"output": "got 41"}}
    assert [e.node_id for e in of_type(events, "started")] == ["echo"]
