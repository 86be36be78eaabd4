"""Aggregate: groups in first-seen order, one `<field>_<op>` result per operation."""

from __future__ import annotations

import pytest

import nodeloom
from nodeloom.errors import GraphError, NodeError
from nodeloom.nodes.data.aggregate.definition import definition
from nodeloom.nodes.data.aggregate.executor import executor
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.context import call_executor

ORDERS = [
    {"country": "FR", "amount": 10, "sku": "a"},
    {"country": "DE", "amount": 5, "sku": "b"},
    {"country": "FR", "amount": 2.5, "sku": "c"},
    {"country": "FR", "sku": "d"},
    {"amount": 1, "sku": "e"},
]


async def run(data: dict, value: object) -> object:
    result, _ = await call_executor(executor, data, {"input": value})
    return result.outputs["output"]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "aggregate"
    assert [p.id for p in definition.parameters] == ["group_by", "operations", "collect"]
    assert definition.parameter("operations").default == [{"op": "count"}]


async def test_groups_come_out_in_first_seen_order_with_every_operation_named_field_op() -> None:
    operations = [
        {"op": "count"},
        {"field": "amount", "op": "sum"},
        {"field": "amount", "op": "min"},
        {"field": "amount", "op": "max"},
        {"field": "amount", "op": "avg"},
        {"field": "sku", "op": "list"},
    ]
    assert await run({"group_by": "country", "operations": operations}, ORDERS) == [
        {
            "country": "FR",
            "count": 3,
            "amount_sum": 12.5,
            "amount_min": 2.5,
            "amount_max": 10,
            "amount_avg": 6.25,
            "sku_list": ["a", "c", "d"],
        },
        {
            "country": "DE",
            "count": 1,
            "amount_sum": 5,
            "amount_min": 5,
            "amount_max": 5,
            "amount_avg": 5,
            "sku_list": ["b"],
        },
        {
            "country": None,
            "count": 1,
            "amount_sum": 1,
            "amount_min": 1,
            "amount_max": 1,
            "amount_avg": 1,
            "sku_list": ["e"],
        },
    ]


async def test_without_group_by_the_output_is_one_object_over_the_whole_list() -> None:
    data = {"operations": [{"op": "count"}, {"field": "amount", "op": "count"}]}
    assert await run(data, ORDERS) == {"count": 5, "amount_count": 4}


async def test_operations_without_a_field_apply_to_plain_values() -> None:
    data = {"operations": [{"op": "sum"}, {"op": "max"}, {"op": "list"}]}
    assert await run(data, [3, 1, 2]) == {"sum": 6, "max": 3, "list": [3, 1, 2]}


async def test_an_empty_list_counts_zero_and_has_no_minimum_or_average() -> None:
    data = {"operations": [{"op": "count"}, {"op": "sum"}, {"op": "avg"}, {"op": "min"}]}
    assert await run(data, []) == {"count": 0, "sum": 0, "avg": None, "min": None}
    assert await run({**data, "group_by": "country"}, []) == []


async def test_group_keys_compare_as_json_values_and_may_be_nested_paths() -> None:
    items = [{"a": {"k": 1}}, {"a": {"k": 1.0}}, {"a": {"k": "1"}}]
    assert await run({"group_by": "a.k"}, items) == [
        {"a.k": 1, "count": 2},
        {"a.k": "1", "count": 1},
    ]


async def test_a_text_value_in_a_sum_names_the_item_and_the_fix() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"operations": [{"field": "n", "op": "sum"}]}, [{"n": 1}, {"n": "2"}])
    assert caught.value.code == "invalid_input"
    assert caught.value.details == {"field": "operations", "item": 1}
    assert str(caught.value) == (
        "Aggregate sum needs a number; field 'n' of item 1 is string \"2\". Convert it first "
        "(Type Converter) or aggregate another field."
    )


async def test_min_of_mixed_numbers_and_strings_is_refused() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"operations": [{"op": "min"}]}, [3, "a"])
    assert caught.value.details["item"] == 1


async def test_a_single_object_is_not_treated_as_a_list() -> None:
    with pytest.raises(NodeError) as caught:
        await run({}, {"amount": 1})
    assert caught.value.code == "invalid_input"


def test_validation_reports_unknown_ops_and_colliding_results_before_the_run() -> None:
    doc = chain(
        node("a", "aggregate", operations=[{"field": "x", "op": "median"}]),
        node("b", "aggregate", operations=[{"op": "count"}, {"op": "count"}]),
    )
    with pytest.raises(GraphError) as caught:
        nodeloom.load(doc)
    messages = {i.node_id: i.message for i in caught.value.issues}
    assert "op must be one of count, sum, min, max, avg, list; got 'median'" in messages["a"]
    assert "operations 0 and 1 both produce 'count'" in messages["b"]


async def test_an_aggregate_node_runs_in_a_graph_on_the_list_before_it() -> None:
    doc = chain(
        node("orders", "json-transform", expression='[{"c": "x", "n": 2}, {"c": "x", "n": 3}]'),
        node("totals", "aggregate", group_by="c", operations=[{"field": "n", "op": "sum"}]),
    )
    result = await nodeloom.load(doc).run()
    assert result.outputs["totals"]["output"] == [{"c": "x", "n_sum": 5}]


async def test_an_each_activation_aggregate_collects_every_value_that_arrives_in_the_run() -> None:
    doc = graph(
        node("a", "json-transform", expression='{"n": 1}'),
        node("b", "json-transform", expression='[{"n": 2}, {"n": 4}]'),
        node(
            "sum",
            "aggregate",
            activation="each",
            collect=True,
            operations=[{"op": "count"}, {"field": "n", "op": "sum"}],
        ),
        edge("a", "sum"),
        edge("b", "sum"),
    )
    sink = nodeloom.ListSink()
    result = await nodeloom.load(doc).run(sink=sink)
    assert result.error is None, result.error
    completed = [
        e.data["outputs"]["output"]
        for e in sink.events
        if e.event_type == "completed" and e.node_id == "sum"
    ]
    assert len(completed) == 2
    assert completed[-1] == {"count": 3, "n_sum": 7}
    assert result.outputs["sum"]["output"] == {"count": 3, "n_sum": 7}
    assert result.state["aggregate:sum"] == [{"n": 1}, {"n": 2}, {"n": 4}]


def test_collect_without_each_activation_is_refused_at_validation() -> None:
    with pytest.raises(GraphError) as caught:
        nodeloom.load(graph(node("s", "aggregate", collect=True)))
    [issue] = caught.value.issues
    assert (issue.field, issue.code) == ("collect", "invalid_parameter")
