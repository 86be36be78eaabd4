"""Draining a run (its process is stopping): no node starts any more, the running ones
finish, and the run stops once none is running, resumable where it stopped."""

from typing import Any

from nodeloom import ListSink, RunSettings, RunStatus
from nodeloom.engine.execution import Execution
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


class DrainWhenStarted(ListSink):
    """Keeps the events, and drains the run when `node_id` starts (no timing involved)."""

    def __init__(self, node_id: str | None) -> None:
        super().__init__()
        self.node_id = node_id
        self.execution: Execution | None = None

    def emit(self, event: Any) -> None:
        super().emit(event)
        if event.event_type == "started" and event.node_id == self.node_id:
            assert self.execution is not None
            self.execution.drain()


async def drained(run, document: dict[str, Any], at: str | None, **settings: Any):
    sink = DrainWhenStarted(at)
    execution = run.load(document).execution(sink=sink, settings=RunSettings(**settings))
    sink.execution = execution
    if at is None:
        execution.drain()  # before it starts
    result = await execution.outcome()
    return execution, result, sink.events


async def test_a_drained_run_lets_its_running_node_finish_and_starts_none_after_it(run):
    doc = chain(
        node("start", "const", value=1),
        node("slow", "sleep", seconds=0.1, value="S"),
        node("after", "const", value="A"),
    )
    execution, result, events = await drained(run, doc, "slow")
    assert len(of_type(events, "completed", "slow")) == 1
    assert result.outputs["slow"] == {"output": "S"}
    assert of_type(events, "started", "after") == []
    assert execution.drained
    assert result.status is RunStatus.CANCELLED
    assert result.error["code"] == "handed_back"
    # No run event: the run has not ended, it is resumable where it stopped.
    assert [e.event_type for e in events if e.event_type.startswith("run_")] == ["run_started"]


async def test_a_drained_run_does_not_start_a_node_that_was_already_ready(run):
    doc = graph(
        node("start", "const", value=1),
        node("first", "sleep", seconds=0.05, value="F"),
        node("second", "sleep", seconds=0.0, value="S"),
        edge("start", "first"),
        edge("start", "second"),
    )
    # One node at a time: `second` is ready, queued, while `first` runs.
    execution, result, events = await drained(run, doc, "first", max_concurrency=1)
    assert [e.node_id for e in of_type(events, "completed")] == ["start", "first"]
    assert of_type(events, "started", "second") == []
    assert execution.drained and result.status is RunStatus.CANCELLED


async def test_a_run_drained_while_its_last_nodes_run_ends_as_usual(run):
    doc = graph(
        node("start", "const", value=1),
        node("left", "sleep", seconds=0.05, value="L"),
        node("right", "sleep", seconds=0.1, value="R"),
        edge("start", "left"),
        edge("start", "right"),
    )
    execution, result, events = await drained(run, doc, "right")
    assert result.status is RunStatus.COMPLETED
    assert not execution.drained
    assert result.outputs["left"] == {"output": "L"} and result.outputs["right"] == {"output": "R"}
    assert events[-1].event_type == "run_completed"


async def test_a_run_drained_before_it_starts_starts_no_node(run):
    doc = chain(node("start", "const", value=1), node("after", "const", value="A"))
    execution, result, events = await drained(run, doc, None)
    assert of_type(events, "started") == []
    assert execution.drained and result.status is RunStatus.CANCELLED


async def test_a_drained_run_whose_node_waits_for_a_person_pauses_as_usual(run):
    doc = graph(
        node("start", "chat-start"),
        node("check", "approval", prompt="Go?"),
        node("slow", "sleep", seconds=0.05, value="S"),
        node("after", "const", value="A"),
        edge("start", "check"),
        edge("start", "slow"),
        edge("slow", "after"),
    )
    execution, result, events = await drained(run, doc, "slow")
    try:
        assert result.status is RunStatus.PAUSED
        assert [w["node_id"] for w in result.waiting] == ["check"]
        assert not execution.drained
        assert len(of_type(events, "completed", "slow")) == 1
        assert of_type(events, "started", "after") == []
    finally:
        await execution.release()


async def test_a_running_loop_node_of_a_drained_run_runs_its_body_to_its_end(run):
    inner = chain(node("wait", "sleep", seconds=0.02), node("double", "const", value="{{ 2 }}"))
    doc = graph(
        node("items", "const", value=[1, 2]),
        node("loop", "loop", body={"nodes": inner["nodes"], "edges": inner["edges"]}),
        node("after", "const", value="A"),
        edge("items", "loop"),
        edge("loop", "after"),
    )
    # Drained as its first iteration starts: the Loop is a running node, it finishes.
    execution, result, events = await drained(run, doc, "loop/wait")
    assert [e.node_id for e in of_type(events, "completed", "loop/double")] == ["loop/double"] * 2
    assert result.outputs["loop"]["output"] == [2, 2]
    assert of_type(events, "started", "after") == []
    assert execution.drained and result.status is RunStatus.CANCELLED
