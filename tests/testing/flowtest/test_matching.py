"""The assertion language of flow tests: subset by default, and four operators."""

from __future__ import annotations

import pytest

from nodeloom.testing.flowtest.matching import mismatches


def test_a_mapping_matches_when_every_key_it_names_matches_and_others_are_ignored():
    assert mismatches({"a": 1}, {"a": 1, "b": 2}, "out") == []
    assert mismatches({"a": {"b": 1}}, {"a": {"b": 1, "c": 3}}, "out") == []


def test_a_missing_key_is_reported_with_its_path_and_the_keys_there_are():
    assert mismatches({"a": {"x": 1}}, {"a": {"b": 1}}, "out") == ["out.a: no key 'x' (it has: b)"]


def test_a_different_value_is_reported_with_its_path_expected_and_got():
    assert mismatches({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "y"}]}, "out") == [
        "out.a[1].b: expected 'x', got 'y'"
    ]


def test_lists_match_item_by_item_and_must_have_the_same_length():
    assert mismatches([{"a": 1}], [{"a": 1, "b": 2}], "o") == []
    assert mismatches([1, 2], [1, 2, 3], "o") == ["o: expected 2 items, got 3: [1, 2, 3]"]


def test_true_does_not_match_one():
    assert mismatches(True, 1, "o") == ["o: expected true, got 1"]
    assert mismatches(1, 1.0, "o") == []


def test_exact_refuses_extra_keys_at_any_depth():
    assert mismatches({"$exact": {"a": {"b": 1}}}, {"a": {"b": 1}}, "o") == []
    (problem,) = mismatches({"$exact": {"a": {"b": 1}}}, {"a": {"b": 1, "c": 2}}, "o")
    assert problem.startswith('o: expected {"a": {"b": 1}}, got {"a": {"b": 1, "c": 2}}')
    assert '+    "c": 2' in problem  # a unified diff of the two, as JSON


def test_contains_finds_text_in_a_string_or_a_matching_item_in_a_list():
    assert mismatches({"$contains": "refund"}, "a refund, soon", "o") == []
    assert mismatches({"$contains": {"id": 2}}, [{"id": 1}, {"id": 2, "x": 0}], "o") == []
    assert mismatches({"$contains": "refund"}, "nothing", "o") == [
        "o: expected something containing 'refund', got 'nothing'"
    ]


def test_regex_searches_a_string():
    assert mismatches({"$regex": r"^\[billing\] "}, "[billing] ok", "o") == []
    assert mismatches({"$regex": "^x"}, 3, "o") == ["o: expected a match of /^x/, got 3"]


def test_any_accepts_every_value_but_the_key_must_exist():
    assert mismatches({"a": {"$any": True}}, {"a": None}, "o") == []
    assert mismatches({"a": {"$any": True}}, {}, "o") == ["o: no key 'a' (it has: none)"]


def test_multi_line_texts_that_differ_come_with_a_diff():
    (problem,) = mismatches("one\ntwo\n", "one\nthree\n", "o")
    assert "-two" in problem and "+three" in problem


@pytest.mark.parametrize("value", [{"$contain": "x"}, {"$regex": "x", "other": 1}])
def test_a_misspelt_or_crowded_operator_makes_the_file_invalid(value, tmp_path):
    from nodeloom.testing.flowtest import FlowTestError, load_flowtest

    path = tmp_path / "t.flowtest.yaml"
    path.write_text(
        "flow: f.json\ntests:\n  - name: one\n    expect:\n      outputs:\n"
        f"        Node: {{output: {_yaml(value)}}}\n"
    )
    with pytest.raises(FlowTestError) as caught:
        load_flowtest(path)
    assert "tests[0] ('one').expect.outputs" in str(caught.value)
    assert "$" in str(caught.value)


def _yaml(value: dict) -> str:
    import json

    return json.dumps(value)
