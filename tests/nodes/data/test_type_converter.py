"""Type Converter: explicit conversions of the input or of one field in a copy of it."""

from __future__ import annotations

from typing import Any

import pytest

from nodeloom.errors import NodeError
from nodeloom.nodes.data.type_converter.definition import definition
from nodeloom.nodes.data.type_converter.executor import executor
from nodeloom.testing.context import call_executor


async def convert(value: Any, to: str, field: str | None = None) -> Any:
    data = {"to": to} if field is None else {"to": to, "field": field}
    result, _ = await call_executor(executor, data, {"input": value})
    assert list(result.outputs) == ["output"]
    return result.outputs["output"]


async def conversion_error(value: Any, to: str, field: str | None = None) -> NodeError:
    with pytest.raises(NodeError) as caught:
        await convert(value, to, field)
    assert caught.value.code == "conversion_error"
    assert caught.value.retryable is False
    return caught.value


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "type-converter"
    assert (definition.name, definition.category, definition.icon) == (
        "Type Converter",
        "data",
        "ArrowLeftRight",
    )
    to = definition.parameter("to")
    assert to is not None
    assert to.options == ("string", "number", "integer", "boolean", "json", "text")
    assert to.required is True
    assert definition.parameter("field") is not None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("hi", "hi"),
        (42, "42"),
        (1.5, "1.5"),
        (True, "true"),
        (False, "false"),
        (None, ""),
        ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
        ([1, 2], "[1,2]"),
    ],
)
async def test_string_renders_scalars_as_text_and_containers_as_compact_json(
    value: Any, text: str
) -> None:
    assert await convert(value, "string") == text


async def test_text_renders_pretty_json() -> None:
    assert await convert({"a": [1]}, "text") == '{\n  "a": [\n    1\n  ]\n}'
    assert await convert("hi", "text") == '"hi"'


@pytest.mark.parametrize(
    ("value", "number"),
    [("42", 42), (" -3 ", -3), ("1.5", 1.5), ("1e3", 1000.0), (7, 7), (2.5, 2.5), (True, 1)],
)
async def test_number_reads_numbers_and_numeric_text(value: Any, number: float) -> None:
    output = await convert(value, "number")
    assert output == number
    assert type(output) is type(number)


@pytest.mark.parametrize(
    ("value", "integer"), [("42", 42), ("3.0", 3), (3.0, 3), ("1e3", 1000), (False, 0), (9, 9)]
)
async def test_integer_accepts_integral_values(value: Any, integer: int) -> None:
    output = await convert(value, "integer")
    assert output == integer
    assert type(output) is int


@pytest.mark.parametrize(
    ("value", "boolean"),
    [
        (True, True),
        ("TRUE", True),
        (" yes ", True),
        ("1", True),
        (1, True),
        ("false", False),
        ("No", False),
        ("0", False),
        (0, False),
        (0.0, False),
    ],
)
async def test_boolean_reads_the_usual_words_and_0_or_1(value: Any, boolean: bool) -> None:
    assert await convert(value, "boolean") is boolean


async def test_json_parses_a_json_string() -> None:
    assert await convert('{"a": [1, true, null]}', "json") == {"a": [1, True, None]}
    assert await convert("42", "json") == 42


async def test_json_leaves_a_value_that_is_already_json_unchanged() -> None:
    assert await convert({"a": 1}, "json") == {"a": 1}


async def test_a_field_is_converted_in_a_copy_of_the_input() -> None:
    order = {"id": "17", "lines": [{"qty": "3"}, {"qty": "4"}]}
    assert await convert(order, "integer", "lines.1.qty") == {
        "id": "17",
        "lines": [{"qty": "3"}, {"qty": 4}],
    }
    assert order["lines"][1]["qty"] == "4"
    assert await convert(order, "number", "id") == {"id": 17, "lines": order["lines"]}


async def test_a_missing_field_fails_the_node() -> None:
    error = await conversion_error({"a": 1}, "number", "b.c")
    assert str(error) == (
        "Type Converter cannot convert field 'b.c' to number: the field is not in the input "
        '(object {"a": 1}).'
    )


async def test_an_impossible_conversion_names_value_field_and_target() -> None:
    error = await conversion_error({"user": {"age": "old"}}, "integer", "user.age")
    assert str(error) == (
        "Cannot convert \"old\" (string) (field 'user.age') to integer: it is not a number "
        "(expected e.g. 42, -1.5 or 1e3)."
    )
    assert error.details == {"field": "user.age", "to": "integer", "value": '"old"'}


@pytest.mark.parametrize(
    ("value", "to", "reason"),
    [
        ("", "number", "the text is empty"),
        (None, "number", "it is not a number"),
        ([1], "number", "it is not a number"),
        ("1e999", "number", "it is out of range"),
        (2.5, "integer", "it has a fractional part; round it first"),
        ("3.5", "integer", "it has a fractional part"),
        ("maybe", "boolean", "expected true/false, yes/no, 1/0"),
        (2, "boolean", "expected true/false"),
        (None, "boolean", "expected true/false"),
        ("{'a': 1}", "json", "it is not valid JSON (Expecting property name enclosed"),
        ("NaN", "json", "NaN is not valid JSON"),
    ],
)
async def test_impossible_conversions_fail_the_node(value: Any, to: str, reason: str) -> None:
    error = await conversion_error(value, to)
    assert f" to {to}: {reason}" in str(error)


async def test_a_long_value_is_truncated_in_the_message() -> None:
    error = await conversion_error("x" * 1000, "number")
    assert len(str(error)) < 200
    assert "…" in str(error)


async def test_an_unknown_target_fails_the_node_listing_the_targets() -> None:
    with pytest.raises(NodeError) as caught:
        await convert(1, "float")
    assert caught.value.code == "invalid_parameter"
    assert str(caught.value) == (
        "Type Converter `to` must be one of string, number, integer, boolean, json, text; "
        'received "float".'
    )
