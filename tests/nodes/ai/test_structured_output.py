import jsonschema

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import chain, node

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
}


def flow(**data):
    return nodeloom.load(
        chain(
            node("start", "chat-start"), node("extract", "structured-output", schema=PERSON, **data)
        )
    )


async def test_the_reply_is_the_object_and_is_sent_with_a_json_schema_response_format(mock_llm):
    mock_llm.script([{"match": {"json_schema": True}, "json": {"name": "Ada", "age": 36}}])
    result = await flow().run("Ada Lovelace, 36 years old")
    assert result.outputs["extract"]["output"] == {"name": "Ada", "age": 36}
    response_format = mock_llm.requests[0].response_format
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == PERSON


async def test_without_a_script_the_mock_answers_json_valid_for_the_schema(mock_llm):
    result = await flow().run("anyone")
    jsonschema.validate(result.outputs["extract"]["output"], PERSON)


async def test_a_reply_that_does_not_match_the_schema_fails_naming_the_field(mock_llm):
    mock_llm.script([{"json": {"name": "Ada", "age": -1}}])
    result = await flow().run("Ada")
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "schema_mismatch"
    assert "age" in result.error["message"]


async def test_a_schema_mismatch_is_retried_and_can_succeed(mock_llm):
    mock_llm.script([{"json": {"name": "Ada"}, "times": 1}, {"json": {"name": "Ada", "age": 1}}])
    result = await flow(retry={"max_attempts": 2, "initial_interval": 0.01}).run("Ada")
    assert result.outputs["extract"]["output"] == {"name": "Ada", "age": 1}
    assert len(mock_llm.requests) == 2


async def test_a_reply_that_is_not_json_fails_clearly(mock_llm):
    mock_llm.script([{"reply": "Sure! Ada is 36."}])
    result = await flow().run("Ada")
    assert result.error["code"] == "schema_mismatch"
    assert "not JSON" in result.error["message"]


def test_a_schema_that_is_not_an_object_schema_is_a_load_error():
    import pytest

    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(
            chain(
                node("s", "chat-start"), node("x", "structured-output", schema={"type": "string"})
            )
        )
    assert caught.value.issues[0].field == "schema"
