"""flow_step blocks from a run's events: the per-node-type summaries (each node folder's
`summarize`), the generic fallback, and the reason of a skipped node."""

import nodeloom
from nodeloom.flow_steps import FlowSteps, registry_lookup
from nodeloom.plugins.contract import Event
from nodeloom.testing.builders import chain, edge, graph, node


async def blocks_of(document, message="go"):
    async with nodeloom.load(document) as flow:
        steps = FlowSteps(registry_lookup(flow.graph, flow.registry))
        sink = nodeloom.ListSink()
        await flow.run(message, sink=sink)
    for event in sink.events:
        steps.push(event)
    return {block["node_id"]: block for block in steps.blocks}


async def test_an_llm_step_is_summarised_by_the_first_words_of_its_text(mock_llm):
    long = "one two three four five six seven eight nine ten eleven twelve thirteen"
    mock_llm.script([{"reply": long}])
    document = chain(
        node("start", "chat-start"),
        node("llm", "llm-completion", name="Writer", prompt="{{ $json.message }}"),
    )
    blocks = await blocks_of(document)
    assert "start" not in blocks  # Chat Start collects the steps; it has none
    assert (
        blocks["llm"]["summary"]
        == "one two three four five six seven eight nine ten eleven twelve …"
    )
    assert blocks["llm"]["status"] == "completed" and blocks["llm"]["node_name"] == "Writer"


async def test_a_switch_says_which_port_fired_and_others_fall_back_to_their_output():
    document = graph(
        node("start", "chat-start"),
        node(
            "route",
            "switch",
            cases=[{"field": "message", "operator": "equals", "value": "go"}],
        ),
        node("say", "prompt-template", template="Said {{ $json.message }}"),
        edge("start", "route"),
        edge("route", "say", "case-0"),
    )
    blocks = await blocks_of(document)
    assert blocks["route"]["summary"] == "→ case-0"
    assert blocks["say"]["summary"] == "→ output: Said go"


def test_a_failed_step_is_summarised_by_its_error_and_a_skipped_one_by_its_reason():
    steps = FlowSteps(lambda node_id, node_type: ({}, None))
    steps.push(Event("started", {}, node_id="t", node_type="code", node_name="T"))
    error = {"code": "code_error", "message": "ZeroDivisionError: division by zero"}
    failed = steps.push(Event("error", {"error": error}, node_id="t", node_type="code"))
    skipped = steps.push(Event("skipped", {"reason": "no value arrived"}, node_id="u"))
    assert failed["status"] == "error" and failed["summary"] == error["message"]
    assert failed["detail"] == {"error": error}
    assert (skipped["status"], skipped["summary"]) == ("skipped", "no value arrived")
    assert [b["node_id"] for b in steps.blocks] == ["t", "u"]


def test_a_summarize_hook_that_raises_falls_back_to_the_generic_summary():
    def broken(parameters, outputs):
        raise RuntimeError("bug")

    steps = FlowSteps(lambda node_id, node_type: ({}, broken))
    block = steps.push(
        Event(
            "completed",
            {"outputs": {"output": {"text": "hi"}}, "duration_ms": 2.4},
            node_id="n",
            node_type="x",
        )
    )
    assert block["summary"] == "→ output: hi" and block["duration_ms"] == 2
