"""Loop node specifics; the scheduling rules of Loop bodies are in tests/conformance."""

import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


def body(*nodes):
    inner = chain(*nodes)
    return {"nodes": inner["nodes"], "edges": inner["edges"]}


async def test_each_iteration_emits_a_progress_event_with_its_number():
    doc = graph(
        node(
            "l",
            "loop",
            items=["a", "b"],
            body=body(node("t", "prompt-template", template="{{ $json }}")),
        )
    )
    sink = nodeloom.ListSink()
    await nodeloom.load(doc).run(sink=sink)
    progress = [e.data for e in of_type(sink.events, "progress", "l")]
    assert progress == [{"iteration": 1, "of": 2}, {"iteration": 2, "of": 2}]


async def test_an_empty_list_outputs_an_empty_list_without_running_the_body():
    doc = graph(node("l", "loop", items=[], body=body(node("t", "prompt-template", template="x"))))
    result = await nodeloom.load(doc).run()
    assert result.outputs["l"]["output"] == []
    assert result.steps == 1


async def test_a_body_chain_passes_data_between_its_nodes_within_an_iteration():
    doc = graph(
        node(
            "l",
            "loop",
            items=[1, 2],
            body=body(
                node("a", "json-transform", expression="$ * 10"),
                node("b", "json-transform", expression="$ + 1"),
            ),
        )
    )
    result = await nodeloom.load(doc).run()
    assert result.outputs["l"]["output"] == [11, 21]


async def test_repeat_without_until_runs_max_iterations_times():
    doc = graph(
        node("seed", "json-transform", expression="0"),
        node(
            "l",
            "loop",
            mode="repeat",
            max_iterations=4,
            body=body(node("inc", "json-transform", expression="$ + 1")),
        ),
        edge("seed", "l"),
    )
    result = await nodeloom.load(doc).run()
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["l"]["output"] == [1, 2, 3, 4]


async def test_a_loop_inside_a_loop_reads_both_loop_items_through_its_own_scope():
    inner = body(node("pair", "prompt-template", template="{{ $json }}"))
    outer = body(node("inner", "loop", items="{{ [$loop.item, $loop.item * 2] }}", body=inner))
    result = await nodeloom.load(graph(node("l", "loop", items=[1, 3], body=outer))).run()
    assert result.outputs["l"]["output"] == [
        [{"text": "1"}, {"text": "2"}],
        [{"text": "3"}, {"text": "6"}],
    ]
