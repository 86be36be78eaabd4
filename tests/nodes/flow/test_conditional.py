"""Conditional: the whole input goes to `true` or `false`, never both."""

from __future__ import annotations

import pytest

from nodeloom.errors import NodeError
from nodeloom.nodes.flow.conditional.definition import definition
from nodeloom.nodes.flow.conditional.executor import executor
from nodeloom.plugins.contract import DataValue
from nodeloom.testing.context import call_executor

ORDER = {"id": 7, "status": "Paid", "total": 120.5}


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "conditional"
    assert (definition.name, definition.category, definition.icon) == (
        "Conditional",
        "flow",
        "GitBranch",
    )
    assert [port.id for port in definition.inputs] == ["input"]
    assert [port.id for port in definition.outputs] == ["true", "false"]
    assert definition.main_port == "true"
    assert [p.id for p in definition.parameters] == ["field", "operator", "value", "caseSensitive"]
    assert definition.parameter("operator").default == "equals"
    assert definition.parameter("caseSensitive").default is True


async def test_a_condition_that_holds_sends_the_input_to_true_only() -> None:
    data = {"field": "status", "operator": "equals", "value": "Paid"}
    result, events = await call_executor(executor, data, {"input": ORDER})
    assert result.outputs == {"true": DataValue("data", ORDER)}
    assert events == []


async def test_a_condition_that_fails_sends_the_input_to_false_only() -> None:
    data = {"field": "total", "operator": "greaterThan", "value": 500}
    result, _ = await call_executor(executor, data, {"input": ORDER})
    assert result.outputs == {"false": DataValue("data", ORDER)}


async def test_the_input_keeps_its_socket_type() -> None:
    incoming = DataValue("string", "hello world")
    data = {"operator": "contains", "value": "WORLD", "caseSensitive": False}
    result, _ = await call_executor(executor, data, {"input": incoming})
    assert result.outputs["true"] is incoming


async def test_a_null_input_can_be_tested() -> None:
    result, _ = await call_executor(executor, {"operator": "isEmpty"}, {"input": None})
    assert list(result.outputs) == ["true"]


async def test_a_comparison_that_cannot_be_made_fails_the_node() -> None:
    data = {"field": "status", "operator": "greaterThan", "value": 1}
    with pytest.raises(NodeError) as caught:
        await call_executor(executor, data, {"input": ORDER})
    assert caught.value.code == "condition_error"
    assert str(caught.value) == (
        "Condition 'greaterThan' on field 'status' needs numbers (or numeric strings), "
        'but received "Paid" (string).'
    )


async def test_an_unknown_operator_fails_the_node_with_a_suggestion() -> None:
    data = {"field": "status", "operator": "equal", "value": "Paid"}
    with pytest.raises(NodeError, match="Did you mean 'equals'"):
        await call_executor(executor, data, {"input": ORDER})


def test_the_check_hook_validates_operator_and_value() -> None:
    assert definition.check is not None
    assert definition.check({"field": "a", "operator": "equals", "value": 1}) == []
    assert definition.check({"field": "a", "operator": "regex", "value": "[a-"}) == [
        ("value", 'Invalid regular expression "[a-": missing ]: [a-.')
    ]
    [(field, _)] = definition.check({"operator": "biggerThan", "value": 1})
    assert field == "operator"
