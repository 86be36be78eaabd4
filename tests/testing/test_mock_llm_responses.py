"""The mock LLM's answers without HTTP: tokens, usage, schema-valid examples."""

from __future__ import annotations

from datetime import date, datetime
from enum import Enum
from typing import Any, Literal
from uuid import UUID

import jsonschema
import pytest
from pydantic import BaseModel, Field

from nodeloom.testing.mock_llm.request import ChatRequest
from nodeloom.testing.mock_llm.responses import (
    Reply,
    ToolCallReply,
    chunks,
    example_for,
    split_tokens,
    usage,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello big world", ["Hello ", "big ", "world"]),
        ("  leading and trailing  ", ["  leading ", "and ", "trailing  "]),
        ("line\nbreak", ["line\n", "break"]),
        ("one", ["one"]),
        ("   ", ["   "]),
        ("", []),
    ],
)
def test_tokens_are_words_with_their_following_space_and_join_back(text, tokens):
    assert split_tokens(text) == tokens
    assert "".join(split_tokens(text)) == text


def chat(*texts: str, **body: Any) -> ChatRequest:
    messages = [{"role": "user", "content": text} for text in texts]
    return ChatRequest.from_body({"model": "m", "messages": messages, **body})


def test_usage_counts_words_and_is_never_zero():
    assert usage(chat("a b", "c"), Reply("x y z")) == {
        "prompt_tokens": 3,
        "completion_tokens": 3,
        "total_tokens": 6,
    }
    assert usage(chat(""), Reply("")) == {
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "total_tokens": 2,
    }
    calls = (ToolCallReply("c", "search", '{"q": "two words"}'),)
    assert usage(chat("q"), Reply(None, calls))["completion_tokens"] == 4


def test_a_tool_call_stream_reassembles_to_the_call():
    call = ToolCallReply("call_1", "search", '{"query": "mock llm", "limit": 3}')

    stream = chunks(Reply(None, (call,), "tool_calls"), chat("q"), completion_id="id", created=0)

    deltas = [c["choices"][0]["delta"] for c in stream]
    assert deltas[0] == {"role": "assistant", "content": None}
    start = deltas[1]["tool_calls"][0]
    assert start == {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": ""},
    }
    fragments = [d["tool_calls"][0]["function"]["arguments"] for d in deltas[2:-1]]
    assert "".join(fragments) == call.arguments
    assert stream[-1]["choices"][0]["finish_reason"] == "tool_calls"


# --- schema-valid examples ----------------------------------------------------------------


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip: str = Field(min_length=5, max_length=5)


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Everything(BaseModel):
    text: str
    short: str = Field(max_length=3)
    long: str = Field(min_length=12)
    whole: int
    positive: int = Field(gt=0)
    bounded: float = Field(ge=2.5, le=10)
    negative: float = Field(lt=-3)
    flag: bool
    colour: Colour
    kind: Literal["a", "b"]
    address: Address
    addresses: list[Address]
    maybe: Address | None
    either: int | str
    tags: dict[str, int]
    pair: tuple[int, str]
    tree: Node
    when: datetime
    day: date
    id: UUID
    optional: str = "left out"


SCHEMAS: dict[str, dict[str, Any]] = {
    "pydantic model with refs, enums, unions, formats": Everything.model_json_schema(),
    "string": {"type": "string"},
    "nullable type list": {"type": ["null", "integer"], "minimum": 4},
    "const": {"const": 7},
    "enum": {"enum": [3, 4]},
    "oneOf": {"oneOf": [{"type": "boolean"}, {"type": "string"}]},
    "allOf": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "number"}}, "required": ["b"]},
        ]
    },
    "array bounds": {"type": "array", "items": {"type": "integer"}, "minItems": 3},
    "array of nothing": {"type": "array", "maxItems": 0},
    "exclusive minimum": {"type": "number", "exclusiveMinimum": 1.5},
    "exclusive maximum": {"type": "integer", "exclusiveMaximum": -1},
    "object without type": {"properties": {"x": {"type": "boolean"}}, "required": ["x"]},
    "definitions (draft 7)": {
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/P"}},
        "required": ["p"],
        "definitions": {"P": {"type": "string", "enum": ["only"]}},
    },
    "anything": {},
}


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=SCHEMAS.keys())
def test_an_example_validates_against_its_schema(schema):
    jsonschema.validate(example_for(schema), schema)


def test_a_pydantic_example_parses_back_into_the_model():
    example = example_for(Everything.model_json_schema())

    parsed = Everything.model_validate(example)

    assert parsed.text == "example"
    assert parsed.colour is Colour.RED
    assert parsed.kind == "a"
    assert parsed.bounded == 2.5
    assert parsed.positive == 1
    assert parsed.addresses == [Address(street="example", zip="examp")]
    assert parsed.tree == Node(name="example")
    assert "optional" not in example


def test_examples_take_the_first_choice_and_the_minimum():
    assert example_for({"type": "integer", "minimum": 5}) == 5
    assert example_for({"type": "number"}) == 0
    assert example_for({"anyOf": [{"type": "boolean"}, {"type": "string"}]}) is False
    assert example_for({"type": "array", "items": {"type": "string"}}) == ["example"]
