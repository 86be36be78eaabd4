"""Text Split: text into a list of parts, by separator or by character chunks."""

from __future__ import annotations

from typing import Any

import pytest

from nodeloom.errors import NodeError
from nodeloom.nodes.data.text_split.definition import definition
from nodeloom.nodes.data.text_split.executor import executor
from nodeloom.testing.context import call_executor


async def split(value: Any, **data: Any) -> list[str]:
    result, _ = await call_executor(executor, data, {"input": value})
    assert list(result.outputs) == ["output"]
    return result.outputs["output"]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "text-split"
    assert (definition.name, definition.category, definition.icon) == (
        "Text Split",
        "data",
        "Scissors",
    )
    defaults = {p.id: p.default for p in definition.parameters}
    assert defaults == {
        "mode": "separator",
        "separator": "\n",
        "chunk_size": 1000,
        "chunk_overlap": 0,
        "keep_empty": False,
    }
    assert definition.parameter("chunk_size").minimum == 1
    assert definition.parameter("chunk_overlap").minimum == 0


async def test_the_default_splits_lines_and_drops_empty_ones() -> None:
    assert await split("one\ntwo\n\nthree\n") == ["one", "two", "three"]


async def test_keep_empty_keeps_the_parts_between_adjacent_separators() -> None:
    assert await split("a,,b,", separator=",", keep_empty=True) == ["a", "", "b", ""]


async def test_a_multi_character_separator_is_taken_literally() -> None:
    assert await split("a -- b -- c", separator=" -- ") == ["a", "b", "c"]
    assert await split("a.b", separator=".") == ["a", "b"]


async def test_an_object_with_a_text_field_is_split() -> None:
    assert await split({"text": "x y", "source": "doc"}, separator=" ") == ["x", "y"]


async def test_an_empty_text_has_no_parts() -> None:
    assert await split("") == []
    assert await split("", keep_empty=True) == [""]
    assert await split("", mode="chunks", chunk_size=3) == []


async def test_chunks_are_fixed_size_without_overlap() -> None:
    assert await split("abcdefghij", mode="chunks", chunk_size=4) == ["abcd", "efgh", "ij"]


async def test_each_chunk_starts_size_minus_overlap_after_the_previous() -> None:
    parts = await split("abcdefghij", mode="chunks", chunk_size=4, chunk_overlap=2)
    assert parts == ["abcd", "cdef", "efgh", "ghij"]


async def test_no_chunk_lies_wholly_inside_the_previous_one() -> None:
    assert await split("abcdefg", mode="chunks", chunk_size=4, chunk_overlap=3) == [
        "abcd",
        "bcde",
        "cdef",
        "defg",
    ]
    assert await split("abc", mode="chunks", chunk_size=10, chunk_overlap=5) == ["abc"]


async def test_chunks_count_characters_not_bytes() -> None:
    assert await split("héllo wörld", mode="chunks", chunk_size=5) == ["héllo", " wörl", "d"]


async def test_an_overlap_not_smaller_than_the_size_fails_the_node() -> None:
    with pytest.raises(NodeError) as caught:
        await split("abc", mode="chunks", chunk_size=3, chunk_overlap=3)
    assert caught.value.code == "invalid_parameter"
    assert str(caught.value) == (
        "Text Split chunk_overlap (3) must be smaller than chunk_size (3); otherwise the "
        "chunks would not advance."
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"chunk_size": 0}, "Text Split chunk_size must be an integer >= 1; received 0."),
        ({"chunk_size": 2.5}, "Text Split chunk_size must be an integer >= 1; received 2.5."),
        ({"chunk_overlap": -1}, "Text Split chunk_overlap must be an integer >= 0; received -1."),
    ],
)
async def test_invalid_chunk_numbers_fail_the_node(data: dict, message: str) -> None:
    with pytest.raises(NodeError) as caught:
        await split("abc", mode="chunks", **data)
    assert str(caught.value) == message


async def test_an_empty_separator_fails_the_node() -> None:
    with pytest.raises(NodeError, match="Text Split needs a non-empty separator; received ''"):
        await split("abc", separator="")


async def test_an_unknown_mode_fails_the_node() -> None:
    with pytest.raises(NodeError, match="mode must be one of separator, chunks; received 'words'"):
        await split("abc", mode="words")


@pytest.mark.parametrize(
    ("value", "received"),
    [(42, "number"), (["a"], "list"), (None, "null"), ({"body": "x"}, "an object without")],
)
async def test_input_that_is_not_text_fails_the_node_naming_its_type(
    value: Any, received: str
) -> None:
    with pytest.raises(NodeError) as caught:
        await split(value)
    assert caught.value.code == "invalid_input"
    assert str(caught.value).startswith(
        "Text Split needs a string, or an object with a string `text`, on its `input` port; "
        f"received {received}"
    )


def test_the_check_hook_catches_an_overlap_not_smaller_than_the_size() -> None:
    assert definition.check is not None
    assert definition.check({"mode": "chunks", "chunk_size": 10, "chunk_overlap": 9}) == []
    assert definition.check({"mode": "chunks", "chunk_size": 10, "chunk_overlap": 10}) == [
        ("chunk_overlap", "chunk_overlap (10) must be smaller than chunk_size (10).")
    ]
    assert definition.check({"mode": "separator", "separator": ""}) == [
        ("separator", "The separator must not be empty.")
    ]
