"""ethan-start: the run's inputs are checked against graph.inputs and become the state."""

from __future__ import annotations

import pytest

from nodeloom import GraphError

GRAPH = """
    state:
      shape: {question: str, answer: "str | null", history: list, meta: dict}
      reducer: REDUCER
      init: {history: [first], meta: {source: yaml}}
    graph:
      inputs: [question, history]
      outputs: [answer, question]
      nodes:
        - {id: echo, type: noop, map: {set: {answer: "{{ inputs.question }}"}}}
"""


async def test_the_state_is_init_then_the_shapes_keys_then_the_inputs(ethan):
    text = GRAPH.replace("REDUCER", "deepmerge")
    result, _ = await ethan.run(text, {"question": "why?", "history": ["second"], "extra": 1})
    assert result.status == "completed", result.error
    assert result.state == {
        "history": ["first", "second"],
        "meta": {"source": "yaml"},
        "question": "why?",
        "answer": "why?",
    }
    assert result.result == {"answer": "why?", "question": "why?"}


async def test_the_replace_reducer_overwrites_init_with_the_inputs(ethan):
    text = GRAPH.replace("REDUCER", "replace")
    result, _ = await ethan.run(text, {"question": "why?", "history": ["second"]})
    assert result.state["history"] == ["second"]


async def test_a_missing_input_is_invalid_input_before_anything_runs(ethan):
    with pytest.raises(GraphError) as caught:
        await ethan.run(GRAPH.replace("REDUCER", "deepmerge"), {"question": "q"})
    (issue,) = caught.value.issues
    assert (issue.code, issue.node_id, issue.field) == (
        "missing_input",
        "__start__",
        "graph.inputs",
    )
    assert "--inputs '{\"history\": ...}'" in issue.message


async def test_no_inputs_at_all_names_every_missing_one(ethan):
    with pytest.raises(GraphError) as caught:
        await ethan.run(GRAPH.replace("REDUCER", "deepmerge"))
    assert "'question', 'history'" in caught.value.issues[0].message


async def test_an_input_that_does_not_fit_the_shape_is_refused(ethan):
    text = GRAPH.replace("REDUCER", "deepmerge")
    result, _ = await ethan.run(text, {"question": 42, "history": []})
    assert result.error["code"] == "invalid_input"
    assert "state.shape.question" in result.error["message"]


async def test_a_graph_timeout_leaves_its_deadline_under_the_bookkeeping_key(ethan):
    text = """
        graph:
          timeout: {seconds: 30}
          nodes:
            - {id: a, type: noop, map: {set: {done: true}}}
    """
    result, _ = await ethan.run(text)
    assert result.state["done"] is True
    assert set(result.state["__ethan__"]) == {"deadline"}
