"""JsonLogic conditions, with templates inside them rendered first."""

from __future__ import annotations

import pytest

from nodeloom.formats.ethan import logic

DATA = {"state": {"score": 0.9, "tags": ["x"]}, "inputs": {}, "result": None, "node": {"id": "n"}}
SCOPE = {"state": DATA["state"], "inputs": {}, "result": None}


def holds(condition) -> bool:
    return logic.evaluate(condition, DATA, SCOPE, "test")


def test_var_reads_the_state():
    assert holds({">": [{"var": "state.score"}, 0.8]})
    assert not holds({"<": [{"var": "state.score"}, 0.5]})


def test_a_template_inside_a_condition_is_rendered_with_its_type():
    assert holds({">": ["{{ state.score }}", 0.8]})
    assert holds({"in": ["x", "{{ state.tags }}"]})


def test_a_rendered_object_stays_a_value_and_is_never_read_as_an_operation():
    scope = {**SCOPE, "state": {"obj": {"var": "boom"}}}
    assert logic.evaluate({"!!": "{{ state.obj }}"}, DATA, scope, "t") is True
    assert logic.evaluate({"==": ["{{ state.obj['var'] }}", "boom"]}, DATA, scope, "t") is True


def test_truthiness_is_jsonlogics():
    assert not holds({"!!": [[]]})
    assert holds({"!!": "{{ state.tags }}"})


def test_the_seeds_double_negation_of_a_list_works():
    assert not holds({"!!": "{{ state.tags | select('equalto', 'y') | list }}"})


def test_problems_lists_unknown_operations_and_bad_templates():
    (problem,) = logic.problems({"and": [{"==": [1, 1]}, {"~~": [1]}]})
    assert problem.startswith("unknown JsonLogic operation '~~'")
    assert "does not compile" in logic.problems({"==": ["{{ a }", 1]})[0]


def test_a_failing_template_is_a_condition_error():
    with pytest.raises(logic.ConditionError, match="test"):
        holds({"==": ["{{ state.missing }}", 1]})
