"""Regex: RE2 patterns over a string of the input, in four modes, in linear time."""

from __future__ import annotations

import time

import pytest

import nodeloom
from nodeloom.errors import GraphError, NodeError
from nodeloom.nodes.data.regex.definition import definition
from nodeloom.nodes.data.regex.executor import executor
from nodeloom.testing.builders import chain, node
from nodeloom.testing.context import call_executor

DATES = "released 2024-05, patched 2025-06"
DATE = r"(?P<year>\d{4})-(?P<month>\d{2})"


async def run(data: dict, value: object) -> object:
    result, _ = await call_executor(executor, data, {"input": value})
    return result.outputs["output"]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "regex"
    assert definition.category == "data"
    assert [p.id for p in definition.parameters] == [
        "pattern",
        "field",
        "mode",
        "replacement",
        "flags",
        "timeout",
    ]
    assert definition.parameter("pattern").type == "code"
    assert definition.parameter("mode").options == ("match", "extract_all", "replace", "split")


async def test_match_gives_the_first_match_its_numbered_groups_and_its_named_groups() -> None:
    assert await run({"pattern": DATE}, DATES) == {
        "matched": True,
        "groups": ["2024-05", "2024", "05"],
        "named": {"year": "2024", "month": "05"},
    }


async def test_match_without_a_match_says_so_with_empty_groups() -> None:
    assert await run({"pattern": r"\d{9}"}, DATES) == {"matched": False, "groups": [], "named": {}}


async def test_extract_all_lists_every_matched_string_without_named_groups() -> None:
    assert await run({"pattern": r"\d{4}", "mode": "extract_all"}, DATES) == ["2024", "2025"]


async def test_extract_all_lists_objects_of_the_named_groups_when_the_pattern_has_them() -> None:
    assert await run({"pattern": DATE, "mode": "extract_all"}, DATES) == [
        {"year": "2024", "month": "05"},
        {"year": "2025", "month": "06"},
    ]


async def test_replace_inserts_numbered_and_named_groups() -> None:
    data = {"pattern": DATE, "mode": "replace", "replacement": r"\g<month>/\1"}
    assert await run(data, DATES) == "released 05/2024, patched 06/2025"


async def test_split_cuts_the_text_at_every_match() -> None:
    assert await run({"pattern": r"\s*,\s*", "mode": "split"}, "a , b,c") == ["a", "b", "c"]


async def test_field_reads_the_string_at_a_dotted_path_of_the_input() -> None:
    value = {"message": {"lines": ["x", "call 555-0199 now"]}}
    data = {"pattern": r"\d{3}-\d{4}", "field": "message.lines.1", "mode": "extract_all"}
    assert await run(data, value) == ["555-0199"]


async def test_the_flags_ignore_case_and_make_caret_match_at_every_line() -> None:
    text = "Alpha\nbeta\nALPHABET"
    data = {"pattern": r"^alpha\w*", "mode": "extract_all", "flags": "im"}
    assert await run(data, text) == ["Alpha", "ALPHABET"]
    assert await run({**data, "flags": ""}, text) == []


async def test_a_pattern_that_is_exponential_for_backtracking_engines_runs_in_linear_time() -> None:
    text = "a" * 50_000 + "!"  # Python's re takes longer than the age of the universe
    started = time.perf_counter()
    assert await run({"pattern": r"^(a+)+$"}, text) == {"matched": False, "groups": [], "named": {}}
    assert time.perf_counter() - started < 2


async def test_a_large_text_is_matched_in_a_thread_and_gives_the_same_answer() -> None:
    text = "x" * 100_000 + " 2024-05"
    assert (await run({"pattern": DATE}, text))["named"] == {"year": "2024", "month": "05"}


async def test_a_lookahead_re2_cannot_compile_fails_with_the_reason_and_the_fix() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"pattern": r"foo(?=bar)"}, "foobar")
    assert caught.value.code == "invalid_parameter"
    assert caught.value.details == {"field": "pattern"}
    message = str(caught.value)
    assert "RE2 cannot compile the pattern 'foo(?=bar)'" in message
    assert "no lookaround" in message


async def test_a_replacement_naming_a_missing_group_says_which_groups_exist() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"pattern": r"(\d+)", "mode": "replace", "replacement": r"\2"}, "a1")
    assert caught.value.details == {"field": "replacement"}
    assert "the pattern has 1 group(s)" in str(caught.value)


async def test_an_input_that_is_not_a_string_without_a_field_is_refused_with_the_fix() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"pattern": "a"}, {"text": "abc"})
    assert caught.value.code == "invalid_input"
    assert "Set `field`" in str(caught.value)


async def test_a_field_that_does_not_lead_to_a_string_lists_the_input_keys() -> None:
    with pytest.raises(NodeError) as caught:
        await run({"pattern": "a", "field": "body"}, {"text": "abc", "n": 1})
    assert str(caught.value) == (
        "Regex field 'body' must lead to a string; found nothing (the path is missing). "
        "The input's keys: text, n."
    )


def test_validation_refuses_lookaround_backreferences_and_unknown_flags_before_the_run() -> None:
    doc = chain(
        node("a", "regex", pattern=r"(\w)\1"),
        node("b", "regex", pattern=r"(?<!x)y", flags="ix"),
        node("c", "regex", pattern=r"\\1 is a literal backslash and 1"),
    )
    with pytest.raises(GraphError) as caught:
        nodeloom.load(doc)
    found = {(i.node_id, i.field, i.code) for i in caught.value.issues}
    assert found == {
        ("a", "pattern", "invalid_parameter"),
        ("b", "pattern", "invalid_parameter"),
        ("b", "flags", "invalid_parameter"),
    }
    messages = {i.node_id + i.field: i.message for i in caught.value.issues}
    assert "a backreference (\\1)" in messages["apattern"]
    assert "a lookaround ((?<!...)" in messages["bpattern"]


async def test_a_regex_node_runs_in_a_graph_on_the_output_of_the_node_before() -> None:
    doc = chain(
        node("text", "json-transform", expression='"order 17, order 42"'),
        node("ids", "regex", pattern=r"order (\d+)", mode="replace", replacement=r"#\1"),
    )
    result = await nodeloom.load(doc).run()
    assert result.outputs["ids"]["output"] == "#17, #42"


async def test_matching_a_huge_text_past_the_timeout_fails_with_regex_timeout() -> None:
    text = "ab" * 10_000_000  # RE2 scans all 20 million characters for the missing "c"
    with pytest.raises(NodeError) as caught:
        await run({"pattern": r"(a|b)+c", "mode": "extract_all", "timeout": 0.001}, text)
    assert caught.value.code == "regex_timeout"
    assert "raise `timeout` or split the text first" in str(caught.value)
