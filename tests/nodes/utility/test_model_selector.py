import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import graph, node


async def test_the_model_port_carries_the_reference_and_base_url_but_never_a_key():
    doc = graph(
        node("sel", "model-selector", model="openai:gpt-4o", base_url="http://example.test/v1")
    )
    result = await nodeloom.load(doc).run()
    assert result.outputs["sel"]["model"] == {
        "model": "openai:gpt-4o",
        "base_url": "http://example.test/v1",
    }


@pytest.mark.parametrize(
    "model, message",
    [
        ("gpt-4o", "names no provider"),
        ("opnai:gpt-4o", "did you mean 'openai'?"),
    ],
)
async def test_a_bad_reference_fails_the_build_with_a_fix(model, message):
    result = await nodeloom.load(graph(node("sel", "model-selector", model=model))).run()
    assert result.status is RunStatus.FAILED
    assert message in result.error["message"] and "'sel'" in result.error["message"]
