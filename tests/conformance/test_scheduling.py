"""Scheduling rules: readiness, dead branches, side sockets, merges, concurrency."""

from nodeloom import RunStatus
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


async def test_independent_branches_of_a_diamond_run_concurrently_and_the_join_runs_once(run):
    doc = graph(
        node("start", "const", value=1),
        node("left", "sleep", seconds=0.2, value="L"),
        node("right", "sleep", seconds=0.2, value="R"),
        node("join", "merge"),
        edge("start", "left"),
        edge("start", "right"),
        edge("left", "join"),
        edge("right", "join"),
    )
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert result.duration_ms < 390, "the two 200 ms branches must overlap"
    assert len(of_type(events, "started", "join")) == 1
    assert result.outputs["join"]["output"] == ["L", "R"]


async def test_a_node_runs_as_soon_as_its_own_inputs_are_settled(run):
    doc = graph(
        node("start", "const", value=1),
        node("slow", "sleep", seconds=0.3),
        node("fast", "sleep", seconds=0.0),
        node("after_fast", "const", value="x"),
        edge("start", "slow"),
        edge("start", "fast"),
        edge("fast", "after_fast"),
    )
    _, events = await run(doc)
    order = [e.node_id for e in of_type(events, "completed")]
    assert order.index("after_fast") < order.index("slow")


async def test_an_edge_from_a_port_that_did_not_fire_is_dead_and_its_target_is_skipped(run):
    doc = graph(
        node("start", "const", value=5),
        node("check", "route", port="a"),
        node("on_a", "const", value="A"),
        node("on_b", "const", value="B"),
        edge("start", "check"),
        edge("check", "on_a", "a"),
        edge("check", "on_b", "b"),
    )
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert "on_a" in result.outputs and "on_b" not in result.outputs
    [skipped] = of_type(events, "skipped", "on_b")
    assert skipped.data["reason"] == "no value arrived on 'input': 'check' did not fire 'b'"


async def test_skipping_propagates_down_the_whole_dead_branch(run):
    doc = graph(
        node("start", "const", value=5),
        node("check", "route", port="a"),
        node("b1", "const", value=1),
        node("b2", "const", value=2),
        node("b3", "const", value=3),
        edge("start", "check"),
        edge("check", "b1", "b"),
        edge("b1", "b2"),
        edge("b2", "b3"),
    )
    _, events = await run(doc)
    skipped = {e.node_id: e.data["reason"] for e in of_type(events, "skipped")}
    assert set(skipped) == {"b1", "b2", "b3"}
    assert skipped["b3"] == "no value arrived on 'input': 'b2' was skipped"


async def test_a_live_side_wire_does_not_keep_a_node_on_a_dead_branch_alive(run):
    doc = graph(
        node("start", "const", value="x"),
        node("check", "route", port="a"),
        node("temp", "number", value=0.9),
        node("echo", "side-echo"),
        edge("start", "check"),
        edge("check", "echo", "b"),
        edge("temp", "echo", "value", "temperature"),
    )
    result, events = await run(doc)
    assert result.status is RunStatus.COMPLETED
    assert "echo" not in result.outputs
    assert of_type(events, "skipped", "echo")
    assert not of_type(events, "started", "echo")


async def test_a_wired_side_socket_overrides_the_inline_value_and_is_coerced(run):
    doc = graph(
        node("start", "const", value="x"),
        node("temp", "number", value=0.9),
        node("echo", "side-echo", temperature=0.1),
        edge("start", "echo"),
        edge("temp", "echo", "value", "temperature"),
        edge("temp", "echo", "value", "label"),
    )
    result, _ = await run(doc)
    assert result.outputs["echo"]["output"] == {"input": "x", "temperature": 0.9, "label": "0.9"}


async def test_a_dead_side_wire_falls_back_to_the_expression_or_inline_value(run):
    doc = graph(
        node("start", "const", value="x"),
        node("check", "route", port="a"),
        node("label_source", "const", value="wired"),
        node("echo", "side-echo", label="inline"),
        edge("start", "check"),
        edge("check", "label_source", "b"),
        edge("start", "echo"),
        edge("label_source", "echo", "output", "label"),
    )
    result, _ = await run(doc)
    assert result.outputs["echo"]["output"]["label"] == "inline"


async def test_merge_fires_once_with_what_arrived_when_a_branch_is_dead(run):
    doc = graph(
        node("start", "const", value=1),
        node("check", "route", port="a"),
        node("via_a", "const", value="A"),
        node("via_b", "const", value="B"),
        node("join", "merge"),
        edge("start", "check"),
        edge("check", "via_a", "a"),
        edge("check", "via_b", "b"),
        edge("via_a", "join"),
        edge("via_b", "join"),
    )
    result, events = await run(doc)
    assert len(of_type(events, "started", "join")) == 1
    assert result.outputs["join"]["output"] == ["A"]


async def test_merge_is_skipped_when_every_incoming_branch_is_dead(run):
    doc = graph(
        node("start", "const", value=1),
        node("check", "route", port="none"),
        node("via_a", "const", value="A"),
        node("via_b", "const", value="B"),
        node("join", "merge"),
        edge("start", "check"),
        edge("check", "via_a", "a"),
        edge("check", "via_b", "b"),
        edge("via_a", "join"),
        edge("via_b", "join"),
    )
    result, events = await run(doc)
    assert "join" not in result.outputs
    assert of_type(events, "skipped", "join")


async def test_merge_orders_values_by_incoming_edge_order_never_by_completion_time(run):
    doc = graph(
        node("start", "const", value=0),
        node("slow", "sleep", seconds=0.15, value="slow"),
        node("fast", "sleep", seconds=0.0, value="fast"),
        node("middle", "sleep", seconds=0.05, value="middle"),
        node("join", "merge"),
        edge("start", "slow"),
        edge("start", "fast"),
        edge("start", "middle"),
        edge("slow", "join"),
        edge("fast", "join"),
        edge("middle", "join"),
    )
    result, events = await run(doc)
    completed = [e.node_id for e in of_type(events, "completed")]
    assert completed.index("fast") < completed.index("slow")
    assert result.outputs["join"]["output"] == ["slow", "fast", "middle"]


async def test_merge_in_object_mode_keys_values_by_source_node_name(run):
    doc = graph(
        node("start", "const", value=0),
        node("a", "const", value=1, name="First"),
        node("b", "const", value=2, name="Second"),
        node("join", "merge", mode="object"),
        edge("start", "a"),
        edge("start", "b"),
        edge("a", "join"),
        edge("b", "join"),
    )
    result, _ = await run(doc)
    assert result.outputs["join"]["output"] == {"First": 1, "Second": 2}


async def test_the_concurrency_cap_bounds_how_many_nodes_run_at_once(run):
    branches = [node(f"s{i}", "sleep", seconds=0.1, value=i) for i in range(6)]
    doc = graph(
        node("start", "const", value=0), *branches, *[edge("start", f"s{i}") for i in range(6)]
    )
    result, _ = await run(doc, max_concurrency=2)
    assert result.status is RunStatus.COMPLETED
    assert result.duration_ms >= 290, "6 x 100 ms with 2 at a time takes 3 rounds"


async def test_every_node_of_a_long_chain_runs_in_order(run):
    doc = chain(*[node(f"n{i}", "const", value=i) for i in range(200)])
    result, events = await run(doc)
    assert [e.node_id for e in of_type(events, "completed")] == [f"n{i}" for i in range(200)]
    assert result.outputs["n199"]["output"] == 199


async def test_nodes_with_no_incoming_edges_all_start_the_run(run):
    doc = graph(node("a", "const", value=1), node("b", "const", value=2))
    result, _ = await run(doc)
    assert result.outputs == {"a": {"output": 1}, "b": {"output": 2}}


async def test_ready_nodes_run_first_ready_first_run_also_when_more_become_ready_meanwhile(run):
    # One at a time: the three branches are ready together, in edge order; 'after_b1'
    # becomes ready while 'b2' and 'b3' still wait, and runs after them.
    doc = graph(
        node("start", "const", value=0),
        node("b1", "const", value=1),
        node("b2", "const", value=2),
        node("b3", "const", value=3),
        node("after_b1", "const", value=4),
        node("after_b3", "const", value=5),
        edge("start", "b1"),
        edge("start", "b2"),
        edge("start", "b3"),
        edge("b1", "after_b1"),
        edge("b3", "after_b3"),
    )
    result, events = await run(doc, max_concurrency=1)
    assert result.status is RunStatus.COMPLETED
    order = [e.node_id for e in of_type(events, "started")]
    assert order == ["start", "b1", "b2", "b3", "after_b1", "after_b3"]
