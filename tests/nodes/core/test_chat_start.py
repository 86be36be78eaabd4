import nodeloom
from nodeloom.testing.builders import graph, node


async def test_chat_start_outputs_the_turns_message():
    result = await nodeloom.load(graph(node("s", "chat-start"))).run("hello")
    assert result.outputs["s"] == {"output": {"message": "hello"}}


async def test_chat_start_outputs_an_empty_message_when_the_run_has_none():
    result = await nodeloom.load(graph(node("s", "chat-start"))).run()
    assert result.outputs["s"]["output"] == {"message": ""}


async def test_every_chat_start_of_a_graph_outputs_the_same_message():
    doc = graph(node("a", "chat-start"), node("b", "chat-start"))
    result = await nodeloom.load(doc).run("same")
    assert result.outputs["a"] == result.outputs["b"] == {"output": {"message": "same"}}
