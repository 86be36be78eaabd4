"""Switch: the input goes to the matching case ports, or to `default`."""

from __future__ import annotations

import pytest

from nodeloom.errors import NodeError
from nodeloom.nodes.flow.switch.definition import definition
from nodeloom.nodes.flow.switch.executor import executor
from nodeloom.plugins.contract import DataValue
from nodeloom.testing.context import call_executor

CASES = [
    {"field": "country", "operator": "equals", "value": "FR"},
    {"field": "total", "operator": "greaterThan", "value": 100},
    {"field": "email", "operator": "endsWith", "value": "@EXAMPLE.COM", "caseSensitive": False},
]


async def route(value: object, cases: list = CASES, mode: str = "first") -> list[str]:
    result, _ = await call_executor(executor, {"cases": cases, "mode": mode}, {"input": value})
    for port_value in result.outputs.values():
        assert port_value == DataValue("data", value)
    return list(result.outputs)


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "switch"
    assert (definition.name, definition.category, definition.icon) == ("Switch", "flow", "Split")
    assert [port.id for port in definition.inputs] == ["input"]
    assert [(port.id, port.repeat) for port in definition.outputs] == [
        ("case-{index}", "cases"),
        ("default", None),
    ]
    assert definition.parameter("cases").default == []
    assert definition.parameter("mode").options == ("first", "all")
    assert definition.parameter("mode").default == "first"


def test_there_is_one_case_port_per_case_then_default() -> None:
    ports = definition.output_ports({"cases": CASES})
    assert [port.id for port in ports] == ["case-0", "case-1", "case-2", "default"]
    assert [port.id for port in definition.output_ports({})] == ["default"]


async def test_mode_first_sends_the_input_to_the_first_matching_case_only() -> None:
    assert await route({"country": "FR", "total": 500}) == ["case-0"]
    assert await route({"country": "DE", "total": 500, "email": "a@example.com"}) == ["case-1"]


async def test_mode_all_sends_the_input_to_every_matching_case() -> None:
    order = {"country": "FR", "total": 500, "email": "a@Example.com"}
    assert await route(order, mode="all") == ["case-0", "case-1", "case-2"]


async def test_default_fires_only_when_no_case_matched() -> None:
    assert await route({"country": "DE", "total": 5}) == ["default"]
    assert await route({"country": "DE", "total": 5}, mode="all") == ["default"]


async def test_a_switch_without_cases_always_takes_default() -> None:
    assert await route({"x": 1}, cases=[]) == ["default"]
    result, _ = await call_executor(executor, {}, {"input": 1})
    assert list(result.outputs) == ["default"]


async def test_mode_first_does_not_evaluate_cases_after_the_match() -> None:
    cases = [{"operator": "exists"}, {"operator": "nonsense"}]
    assert await route("x", cases=cases) == ["case-0"]


async def test_a_failing_case_names_its_index() -> None:
    cases = [{"field": "total", "operator": "lessThan", "value": "ten"}]
    with pytest.raises(NodeError) as caught:
        await route({"total": 5}, cases=cases)
    assert caught.value.code == "condition_error"
    assert str(caught.value) == (
        "Switch cases[0]: Condition 'lessThan' on field 'total' needs numbers (or numeric "
        'strings), but the value to compare with is "ten" (string).'
    )
    assert caught.value.details["case"] == 0


async def test_cases_that_are_not_a_list_fail_the_node() -> None:
    with pytest.raises(NodeError, match=r"Switch cases must be a list .* received object"):
        await route(1, cases={"operator": "exists"})  # type: ignore[arg-type]


async def test_a_case_that_is_not_an_object_fails_the_node() -> None:
    with pytest.raises(NodeError, match=r"Switch cases\[1\] must be a condition object"):
        await route(1, cases=[{"operator": "exists"}, "equals"])


async def test_an_unknown_mode_fails_the_node() -> None:
    with pytest.raises(NodeError, match="Switch mode must be one of first, all; received 'any'"):
        await route(1, mode="any")


def test_the_check_hook_locates_each_case_problem() -> None:
    assert definition.check is not None
    assert definition.check({"cases": CASES}) == []
    issues = definition.check(
        {
            "cases": [
                {"field": "a", "operator": "equals", "value": 1},
                {"field": "a", "operator": "greaterthan", "value": 1},
                {"field": "b", "operator": "contains"},
                "nope",
            ]
        }
    )
    assert [field for field, _ in issues] == ["cases[1].operator", "cases[2].value", "cases[3]"]
    assert "Did you mean 'greaterThan'?" in issues[0][1]


def test_the_check_hook_rejects_cases_that_are_not_a_list() -> None:
    assert definition.check is not None
    assert definition.check({"cases": {"operator": "exists"}}) == [
        ("cases", "cases must be a list of conditions {field, operator, value}.")
    ]
    assert definition.check({"cases": "{{ $vars.cases }}"}) == []
