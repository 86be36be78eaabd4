"""The rules of the seed's node catalogue not covered by its examples, one test each."""

from __future__ import annotations

import json


async def test_name_and_description_are_accepted_and_kept(ethan):
    text = """
        graph:
          nodes:
            - {id: a, type: noop, name: Tidy up, description: Clears temp keys, map: {set: {x: 1}}}
    """
    node = next(n for n in ethan.load(text).graph.to_json()["nodes"] if n["id"] == "a")
    spec = json.loads(node["data"]["spec"])
    assert spec["name"] == "Tidy up" and spec["description"] == "Clears temp keys"


async def test_conditions_see_the_node_and_the_inputs(ethan):
    text = """
        state: {init: {seen: []}}
        graph:
          inputs: [who]
          nodes:
            - id: branch
              type: router
              cases:
                - when:
                    and: [{"==": [{var: node.id}, branch]}, {"==": [{var: node.type}, router]}]
                  to: by_node
                - when: {"==": [{var: inputs.who}, ada]}
                  to: by_input
            - {id: by_node, type: noop, map: {merge: {seen: [node]}}}
            - {id: by_input, type: noop, map: {merge: {seen: [input]}}}
    """
    result, _ = await ethan.run(text, {"who": "ada"})
    assert sorted(result.state["seen"]) == ["input", "node"]


async def test_edge_conditions_see_the_nodes_result_and_output(ethan):
    (ethan.folder / "tools.py").write_text("def n():\n    return {'json': {'n': 7}}\n")
    text = """
        state: {init: {seen: []}}
        tools: [{id: n, kind: python, impl: tools.py#n}]
        graph:
          nodes:
            - id: get
              type: tool
              uses: n
              map: {set: {via_output: "{{ output.json.n }}"}}
            - {id: seven, type: noop, map: {merge: {seen: [seven]}}}
            - {id: other, type: noop, map: {merge: {seen: [other]}}}
          edges:
            - {from: get, to: seven, when: {"==": [{var: result.json.n}, 7]}}
            - {from: get, to: other, when: {"!=": [{var: output.json.n}, 7]}}
    """
    result, _ = await ethan.run(text)
    assert result.state["seen"] == ["seven"]
    assert result.state["via_output"] == 7


async def test_a_loop_runs_10_iterations_by_default(ethan):
    text = """
        state: {init: {n: 0}}
        graph:
          nodes:
            - {id: again, type: loop, body: step}
            - {id: step, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}
    """
    result, _ = await ethan.run(text)
    assert result.state["n"] == 10


async def test_the_loops_own_on_error_handles_a_failing_body(ethan):
    (ethan.folder / "tools.py").write_text("def boom():\n    raise OSError('gone')\n")
    text = """
        tools: [{id: boom, kind: python, impl: tools.py#boom}]
        graph:
          nodes:
            - {id: again, type: loop, body: risky, on_error: {to: rescue}}
            - {id: risky, type: tool, uses: boom}
            - {id: rescue, type: noop, map: {set: {rescued: true}}}
    """
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state == {"rescued": True}
    error = result.outputs["again.on_error"]["result"]["error"]
    assert error["node_id"] == "again" and "OSError: gone" in error["message"]


async def test_every_entry_node_runs(ethan):
    text = """
        state: {init: {seen: []}}
        graph:
          nodes:
            - {id: a, type: noop, map: {merge: {seen: [a]}}}
            - {id: b, type: noop, map: {merge: {seen: [b]}}}
    """
    result, _ = await ethan.run(text)
    assert sorted(result.state["seen"]) == ["a", "b"]


async def test_meta_default_retry_applies_to_llm_nodes(ethan, mock_llm):
    mock_llm.script(
        [
            {"error": {"status": 500, "message": "oops"}, "times": 2},
            {"reply": "fine"},
        ]
    )
    text = """
        meta:
          defaults:
            llm: "openai:gpt-4o-mini"
            retry: {max_attempts: 3, backoff: 0}
        prompts: {templates: {p: {user: hi}}}
        graph:
          nodes:
            - {id: ask, type: llm, prompt: p, map: {set: {reply: "{{ result.text }}"}}}
    """
    result, events = await ethan.run(text)
    assert result.state["reply"] == "fine"
    assert len(mock_llm.requests) == 3
    assert len([e for e in events if e.event_type == "progress"]) == 2


async def test_subgraph_inputs_are_the_parents_inputs_with_the_nodes_over_them(ethan):
    text = """
        subgraphs:
          inner:
            nodes:
              - id: see
                type: noop
                map: {set: {topic: "{{ inputs.topic }}", lang: "{{ inputs.lang }}"}}
        graph:
          inputs: [topic, lang]
          nodes:
            - {id: go, type: subgraph, graph: inner, inputs: {lang: fr}}
    """
    result, _ = await ethan.run(text, {"topic": "tides", "lang": "en"})
    assert result.state["topic"] == "tides" and result.state["lang"] == "fr"
