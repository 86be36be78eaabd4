import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import chain, node


async def run(template, message="Ada"):
    flow = nodeloom.load(
        chain(node("s", "chat-start"), node("t", "prompt-template", template=template))
    )
    return await flow.run(message)


async def test_the_template_renders_every_expression_into_text():
    result = await run("Hi {{ $json.message }}, from {{ $('s').item.json.message }}")
    assert result.outputs["t"]["output"] == {"text": "Hi Ada, from Ada"}


async def test_a_non_string_value_is_written_as_json_text():
    result = await run("{{ $json }}")
    assert result.outputs["t"]["output"] == {"text": '{"message": "Ada"}'}


async def test_plain_text_without_expressions_passes_through():
    result = await run("no braces here")
    assert result.outputs["t"]["output"]["text"] == "no braces here"


async def test_a_missing_field_fails_the_node_naming_the_field():
    result = await run("{{ $json.nope }}")
    assert result.status is RunStatus.FAILED
    assert "'nope'" in result.error["message"] and result.error["node_id"] == "t"
