import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.events import of_type

CATEGORIES = [{"name": "billing", "description": "payments and refunds"}, "support", "other"]


def flow():
    return nodeloom.load(
        graph(
            node("start", "chat-start"),
            node("triage", "classifier", categories=CATEGORIES, name="Triage"),
            node("bill", "prompt-template", template="billing: {{ $json.message }}"),
            node("help", "prompt-template", template="support: {{ $json.message }}"),
            edge("start", "triage"),
            edge("triage", "bill", "billing"),
            edge("triage", "help", "support"),
        )
    )


async def test_the_input_is_routed_to_the_port_of_the_chosen_category(mock_llm):
    mock_llm.script(
        [
            {
                "match": {"last_message": {"contains": "refund"}},
                "json": {"category": "billing", "reason": "money back"},
            }
        ]
    )
    sink = nodeloom.ListSink()
    result = await flow().run("I want a refund", sink=sink)
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["Triage"] == {
        "category": {"category": "billing", "reason": "money back"},
        "billing": {"message": "I want a refund"},
    }
    assert result.outputs["bill"]["output"]["text"] == "billing: I want a refund"
    assert of_type(sink.events, "skipped", "help")


async def test_the_model_is_told_the_categories_and_constrained_to_their_names(mock_llm):
    mock_llm.script([{"json": {"category": "support", "reason": "r"}}])
    await flow().run("my app crashes")
    request = mock_llm.requests[0]
    schema = request.response_format["json_schema"]["schema"]
    assert schema["properties"]["category"]["enum"] == ["billing", "support", "other"]
    assert "payments and refunds" in request.messages[0]["content"]


async def test_a_category_outside_the_list_fails_the_node(mock_llm):
    mock_llm.script([{"json": {"category": "spam", "reason": "r"}}])
    result = await flow().run("buy now")
    assert result.error["code"] == "schema_mismatch"


@pytest.mark.parametrize(
    "categories, field",
    [
        (["only-one"], "categories"),
        (["a", "a"], "categories[1]"),
        (["a", "category"], "categories[1]"),
    ],
)
def test_bad_category_lists_are_load_errors(categories, field):
    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(
            graph(
                node("s", "chat-start"),
                node("c", "classifier", categories=categories),
                edge("s", "c"),
            )
        )
    assert caught.value.issues[0].field == field


def test_each_category_is_an_output_port_an_edge_can_use():
    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(
            graph(
                node("s", "chat-start"),
                node("c", "classifier", categories=["a", "b"]),
                node("t", "prompt-template", template="x"),
                edge("s", "c"),
                edge("c", "t", "z"),
            )
        )
    assert "valid output ports: category, a, b" in caught.value.issues[0].message
