"""Workflow If: conditions on the previous output as lower-case text; first match wins."""

import pytest

from nodeloom.formats.workflow.nodes.condition.definition import check, definition
from nodeloom.formats.workflow.nodes.condition.executor import as_text, executor, matches
from nodeloom.testing.context import call_executor


@pytest.mark.parametrize(
    "text, operator, value, holds",
    [
        ("yes", "equal", "YES", True),
        ("yes", "equal", "  yes  ", True),
        ("yes!", "equal", "yes", False),
        ("oh yes!", "contains", "Yes", True),
        ("anything", "contains", "", False),
        ("", "equal", "", False),
        ("anything", "contains", "   ", False),
    ],
)
def test_a_condition_compares_trimmed_lower_case_values(text, operator, value, holds):
    assert matches(text, operator, value) is holds


def test_the_previous_output_is_text_or_compact_json():
    assert as_text("Hi") == "Hi"
    assert as_text({"ok": True, "n": [1, 2]}) == '{"ok":true,"n":[1,2]}'
    assert as_text(None) == ""


async def test_a_json_output_is_compared_as_lower_case_json_text():
    conditions = [{"operator": "contains", "value": '"STATUS":"OK"'}]
    value = {"Status": "ok"}
    result, _ = await call_executor(executor, {"conditions": conditions}, {"input": value})
    assert result.outputs == {"condition-0": value}, "the value itself is passed on"


async def test_no_condition_holding_fires_false_after_logging_each_check():
    conditions = [{"operator": "equal", "value": "a"}, {"operator": "contains", "value": "b"}]
    result, events = await call_executor(executor, {"conditions": conditions}, {"input": "zzz"})
    assert result.outputs == {"false": "zzz"}
    assert [e.data["log"] for e in events] == ["step_start", "logic_check", "logic_check"]
    assert [e.data["result"] for e in events[1:]] == [False, False]


def test_the_ports_are_one_per_condition_and_false():
    data = {"conditions": [{"operator": "equal", "value": "a"}] * 3}
    ports = [p.id for p in definition.output_ports(data)]
    assert ports == ["condition-0", "condition-1", "condition-2", "false"]


@pytest.mark.parametrize(
    "conditions, field",
    [
        ("yes", "conditions"),
        (["yes"], "conditions[0]"),
        ([{"operator": "startsWith", "value": "a"}], "conditions[0].operator"),
        ([{"operator": "equal", "value": 1}], "conditions[0].value"),
        ([{"operator": "equal", "value": "a", "case": True}], "conditions[0]"),
    ],
)
def test_malformed_conditions_are_refused_when_the_graph_loads(conditions, field):
    assert [f for f, _ in check({"conditions": conditions})] == [field]


def test_well_formed_or_templated_conditions_pass():
    assert check({"conditions": [{"operator": "contains", "value": "x"}, {"value": "y"}]}) == []
    assert check({"conditions": "{{ $vars.rules }}"}) == []
