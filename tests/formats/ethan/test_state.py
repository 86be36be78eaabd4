"""Map semantics (set → merge → delete) and the deep merge subgraphs use."""

from __future__ import annotations

import pytest

from nodeloom.formats.ethan.state import MapError, apply_map, deep_merge


def test_dicts_merge_recursively():
    assert deep_merge({"a": {"x": 1, "y": 1}}, {"a": {"y": 2, "z": 3}}) == {
        "a": {"x": 1, "y": 2, "z": 3}
    }


def test_lists_concatenate_without_duplicating_items_the_target_had():
    assert deep_merge(["a", "b"], ["b", "c"]) == ["a", "b", "c"]
    assert deep_merge([{"q": 1}], [{"q": 1}, {"q": 2}]) == [{"q": 1}, {"q": 2}]


def test_items_repeated_in_the_incoming_list_are_kept():
    assert deep_merge([], ["x", "x"]) == ["x", "x"]


def test_equality_is_json_equality():
    assert deep_merge([1], [True, 1.0]) == [1, True]


def test_null_keeps_the_target_and_other_kinds_replace_it():
    assert deep_merge({"a": 1}, None) == {"a": 1}
    assert deep_merge({"a": [1]}, {"a": "text"}) == {"a": "text"}
    assert deep_merge(None, [1]) == [1]


def test_merge_changes_neither_input():
    target, incoming = {"a": [1]}, {"a": [2]}
    deep_merge(target, incoming)
    assert target == {"a": [1]} and incoming == {"a": [2]}


def test_set_merge_delete_apply_in_that_order():
    state = {"keep": 1, "tmp": "x", "log": ["a"]}
    apply_map(
        state,
        set_values={"tmp": "y", "answer.text": "hi"},
        merge_values={"log": ["a", "b"], "answer": {"tokens": 3}},
        delete_paths=["tmp", "answer.nope"],
    )
    assert state == {"keep": 1, "log": ["a", "b"], "answer": {"text": "hi", "tokens": 3}}


def test_a_path_through_a_value_that_is_not_an_object_is_an_error():
    with pytest.raises(MapError, match="'a' is a string"):
        apply_map({"a": "text"}, set_values={"a.b": 1}, merge_values={}, delete_paths=[])
