"""The Loop container: an inner graph run per item or until a condition holds."""

import pytest

from nodeloom import GraphError, RunStatus
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


def body(*nodes):
    inner = chain(*nodes)
    return {"nodes": inner["nodes"], "edges": inner["edges"]}


async def test_for_each_runs_the_body_once_per_item_and_outputs_the_results(run):
    doc = graph(
        node("items", "const", value=[1, 2, 3]),
        node("loop", "loop", body=body(node("double", "const", value="{{ $json * 2 }}"))),
        edge("items", "loop"),
    )
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["loop"]["output"] == [2, 4, 6]
    assert [e.node_id for e in of_type(events, "started") if "/" in e.node_id] == [
        "loop/double"
    ] * 3


async def test_the_body_sees_loop_index_and_item_and_outer_upstream_nodes(run):
    doc = graph(
        node("prefix", "const", value="n", name="Prefix"),
        node(
            "loop",
            "loop",
            items=["a", "b"],
            body=body(
                node(
                    "fmt",
                    "const",
                    value="{{ $('Prefix').item.json }}{{ $loop.index }}={{ $loop.item }}",
                )
            ),
        ),
        edge("prefix", "loop"),
    )
    result, _ = await run(doc)
    assert result.outputs["loop"]["output"] == ["n0=a", "n1=b"]


async def test_items_come_from_an_expression_when_given(run):
    doc = graph(
        node("src", "const", value={"rows": [{"v": 1}, {"v": 2}]}),
        node(
            "loop",
            "loop",
            items="{{ $json.rows }}",
            body=body(node("pick", "const", value="{{ $json.v }}")),
        ),
        edge("src", "loop"),
    )
    result, _ = await run(doc)
    assert result.outputs["loop"]["output"] == [1, 2]


async def test_repeat_feeds_each_result_to_the_next_iteration_until_the_condition_holds(run):
    doc = graph(
        node("seed", "const", value=1),
        node(
            "loop",
            "loop",
            mode="repeat",
            until="{{ $json >= 20 }}",
            max_iterations=10,
            body=body(node("triple", "const", value="{{ $json * 3 }}")),
        ),
        edge("seed", "loop"),
    )
    result, _ = await run(doc)
    assert result.outputs["loop"]["output"] == [3, 9, 27]


async def test_repeat_stops_at_max_iterations_without_failing_by_default(run):
    doc = graph(
        node("seed", "const", value=1),
        node(
            "loop",
            "loop",
            mode="repeat",
            until="{{ false }}",
            max_iterations=3,
            body=body(node("inc", "const", value="{{ $json + 1 }}")),
        ),
        edge("seed", "loop"),
    )
    result, _ = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["loop"]["output"] == [2, 3, 4]


async def test_repeat_can_fail_when_max_iterations_is_reached_before_until(run):
    doc = graph(
        node("seed", "const", value=1),
        node(
            "loop",
            "loop",
            mode="repeat",
            until="{{ false }}",
            max_iterations=2,
            on_max_iterations="error",
            body=body(node("inc", "const", value="{{ $json + 1 }}")),
        ),
        edge("seed", "loop"),
    )
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "loop_max_iterations"


async def test_a_failure_inside_the_body_fails_the_loop_naming_the_iteration(run):
    doc = graph(
        node("items", "const", value=[1, 2]),
        node("loop", "loop", body=body(node("bad", "fail", message="inner"))),
        edge("items", "loop"),
    )
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert result.error["node_id"] == "loop"
    assert "iteration 0" in result.error["message"] and "inner" in result.error["message"]


async def test_body_node_executions_count_against_max_steps(run):
    doc = graph(
        node("items", "const", value=list(range(50))),
        node("loop", "loop", body=body(node("x", "const", value=1))),
        edge("items", "loop"),
    )
    result, _ = await run(doc, max_steps=20)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "max_steps_exceeded"


async def test_a_non_list_for_each_input_fails_with_a_clear_message(run):
    doc = graph(
        node("src", "const", value={"not": "a list"}),
        node("loop", "loop", body=body(node("x", "const", value=1))),
        edge("src", "loop"),
    )
    result, _ = await run(doc)
    assert result.error["code"] == "loop_items"
    assert "got dict" in result.error["message"]


def test_problems_inside_the_body_are_located_under_the_loop(run):
    doc = graph(node("loop", "loop", items=[1], body=body(node("x", "nope"))))
    with pytest.raises(GraphError) as caught:
        run.load(doc)
    [issue] = caught.value.issues
    assert issue.code == "unknown_node_type" and issue.node_id == "loop/x"


def test_a_body_with_several_end_nodes_needs_output_node(run):
    inner = {"nodes": [node("a", "const", value=1), node("b", "const", value=2)], "edges": []}
    with pytest.raises(GraphError) as caught:
        run.load(graph(node("loop", "loop", items=[1], body=inner)))
    assert caught.value.issues[0].field == "output_node"


async def test_output_node_picks_which_body_node_gives_the_result(run):
    inner = {"nodes": [node("a", "const", value="A"), node("b", "const", value="B")], "edges": []}
    result, _ = await run(graph(node("loop", "loop", items=[1], body=inner, output_node="a")))
    assert result.outputs["loop"]["output"] == ["A"]


# -- concurrency ----------------------------------------------------------------------


def sleeper(**data):
    return body(node("s", "sleep", seconds="{{ $json }}", **data))


async def test_concurrent_iterations_overlap_and_their_results_stay_in_item_order(run):
    doc = graph(node("loop", "loop", items=[0.2, 0.05, 0.1], concurrency=3, body=sleeper()))
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["loop"]["output"] == [0.2, 0.05, 0.1]
    inner = [
        e for e in events if e.node_id == "loop/s" and e.event_type in ("started", "completed")
    ]
    assert [e.event_type for e in inner] == ["started"] * 3 + ["completed"] * 3
    finished = [e.data["outputs"]["output"] for e in inner if e.event_type == "completed"]
    assert finished == [0.05, 0.1, 0.2]
    progress = [e.data for e in of_type(events, "progress", "loop")]
    assert progress == [{"iteration": n, "of": 3} for n in (1, 2, 3)]


async def test_no_more_iterations_run_at_once_than_the_concurrency(run):
    doc = graph(node("loop", "loop", items=[0.05] * 5, concurrency=2, body=sleeper()))
    result, events = await run(doc)
    assert result.outputs["loop"]["output"] == [0.05] * 5
    running = peak = 0
    for event in events:
        if event.node_id == "loop/s" and event.event_type == "started":
            running += 1
            peak = max(peak, running)
        elif event.node_id == "loop/s" and event.event_type == "completed":
            running -= 1
    assert peak == 2


async def test_a_failing_concurrent_iteration_cancels_the_others_and_fails_the_loop(run):
    doc = graph(node("loop", "loop", items=[5, "x", 5], concurrency=3, body=sleeper()))
    result, _ = await run(doc, timeout=4)
    assert result.status is RunStatus.FAILED
    assert result.error["node_id"] == "loop"
    assert "failed: iteration 1: node 's'" in result.error["message"]
    assert sorted(result.state["cancelled"]) == ["loop/s", "loop/s"]


async def test_a_body_that_may_wait_for_a_person_cannot_run_concurrently(run):
    approve = {"nodes": [node("ok", "approval")], "edges": []}
    doc = graph(node("loop", "loop", items=[1, 2], concurrency=2, body=approve))
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "invalid_parameter"
    assert "set concurrency to 1" in result.error["message"]


async def test_a_run_pauses_only_after_every_concurrent_iteration_has_finished(run):
    doc = graph(
        node("ok", "approval"),
        node("loop", "loop", items=[0.02, 0.1, 0.1], concurrency=3, body=sleeper()),
    )
    paused, _ = await run(doc)
    assert paused.status is RunStatus.PAUSED
    assert paused.outputs["loop"]["output"] == [0.02, 0.1, 0.1]


async def test_a_loop_beside_a_waiting_approval_finishes_every_iteration_before_the_pause(run):
    doc = graph(
        node("ok", "approval"),
        node("loop", "loop", items=[0.01, 0.01, 0.01], body=sleeper()),
    )
    paused, _ = await run(doc)
    assert paused.status is RunStatus.PAUSED
    assert paused.outputs["loop"]["output"] == [0.01, 0.01, 0.01]
