"""Filter: matching items on `pass`, the rest on `reject`; an empty side does not fire."""

from __future__ import annotations

import pytest

from nodeloom.errors import NodeError
from nodeloom.nodes.data.filter.definition import definition
from nodeloom.nodes.data.filter.executor import executor
from nodeloom.testing.context import call_executor

PEOPLE = [
    {"name": "Ada", "age": 36, "city": "London"},
    {"name": "Grace", "age": 85, "city": "New York"},
    {"name": "Alan", "age": 41, "city": "london"},
    {"name": "Kid"},
]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "filter"
    assert (definition.name, definition.category, definition.icon) == ("Filter", "data", "Filter")
    assert [port.id for port in definition.inputs] == ["input"]
    assert [port.id for port in definition.outputs] == ["pass", "reject"]
    assert definition.main_port == "pass"
    assert [p.id for p in definition.parameters] == ["field", "operator", "value", "caseSensitive"]


async def test_matching_items_pass_and_the_others_are_rejected_in_order() -> None:
    data = {"field": "age", "operator": "greaterThan", "value": 40}
    result, _ = await call_executor(executor, data, {"input": PEOPLE})
    assert result.outputs == {
        "pass": [PEOPLE[1], PEOPLE[2]],
        "reject": [PEOPLE[0], PEOPLE[3]],
    }


async def test_case_insensitive_matching_applies_to_each_item() -> None:
    data = {"field": "city", "operator": "equals", "value": "LONDON", "caseSensitive": False}
    result, _ = await call_executor(executor, data, {"input": PEOPLE})
    assert [p["name"] for p in result.outputs["pass"]] == ["Ada", "Alan"]


async def test_reject_does_not_fire_when_every_item_matches() -> None:
    data = {"field": "name", "operator": "exists"}
    result, _ = await call_executor(executor, data, {"input": PEOPLE})
    assert result.outputs == {"pass": PEOPLE}


async def test_pass_does_not_fire_when_no_item_matches() -> None:
    data = {"field": "name", "operator": "equals", "value": "Linus"}
    result, _ = await call_executor(executor, data, {"input": PEOPLE})
    assert result.outputs == {"reject": PEOPLE}


async def test_an_empty_list_fires_neither_port() -> None:
    result, _ = await call_executor(executor, {"operator": "exists"}, {"input": []})
    assert result.outputs == {}


async def test_items_can_be_scalars_tested_without_a_field() -> None:
    data = {"operator": "regex", "value": r"^\d+$"}
    result, _ = await call_executor(executor, data, {"input": ["12", "a1", 7]})
    assert result.outputs == {"pass": ["12", 7], "reject": ["a1"]}


async def test_a_single_object_is_not_treated_as_a_list() -> None:
    with pytest.raises(NodeError) as caught:
        await call_executor(executor, {"operator": "exists"}, {"input": {"name": "Ada"}})
    assert caught.value.code == "invalid_input"
    assert caught.value.retryable is False
    assert str(caught.value) == (
        'Filter needs a list on its `input` port; received object {"name": "Ada"}. A single '
        "item is not treated as a list of one: wrap it in a list first (for example with "
        "JSON Transform `[$]`)."
    )


async def test_a_failing_item_is_named_by_its_index() -> None:
    data = {"field": "age", "operator": "lessThan", "value": 50}
    items = [{"age": 1}, {"age": "unknown"}]
    with pytest.raises(NodeError) as caught:
        await call_executor(executor, data, {"input": items})
    assert caught.value.code == "condition_error"
    assert str(caught.value) == (
        "Filter item 1: Condition 'lessThan' on field 'age' needs numbers (or numeric "
        'strings), but received "unknown" (string).'
    )
    assert caught.value.details == {"field": "age", "operator": "lessThan", "item": 1}


def test_the_check_hook_validates_the_condition() -> None:
    assert definition.check is not None
    assert definition.check({"field": "age", "operator": "greaterThan", "value": 3}) == []
    assert definition.check({"field": "age", "operator": "greaterThan"}) == [
        ("value", "The operator 'greaterThan' needs a value.")
    ]
