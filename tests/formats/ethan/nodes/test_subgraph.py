"""ethan-subgraph: a frame of its own, merged back without duplicating lists."""

from __future__ import annotations

COLLECT = """
    state:
      init: {tags: [a, b], notes: {first: 1}}
    subgraphs:
      collect:
        inputs: [tag]
        outputs: [added]
        nodes:
          - id: add
            type: noop
            map:
              merge: {tags: ["{{ inputs.tag }}"], notes: {second: 2}}
              set: {added: "{{ inputs.tag }}", seen_parent_input: "{{ inputs.origin }}"}
    graph:
      inputs: [origin]
      outputs: [tags]
      nodes:
        - id: collect
          type: subgraph
          graph: collect
          inputs: {tag: c}
          map: {set: {last: "{{ output.added }}", all: "{{ output.outputs }}"}}
"""


async def test_the_final_state_merges_back_without_duplicating_the_parents_lists(ethan):
    result, _ = await ethan.run(COLLECT, {"origin": "cli"})
    assert result.status == "completed", result.error
    assert result.state["tags"] == ["a", "b", "c"]  # the original gave [a, b, a, b, c]
    assert result.state["notes"] == {"first": 1, "second": 2}
    assert result.state["last"] == "c"
    assert result.state["all"] == {"added": "c"}
    assert result.state["seen_parent_input"] == "cli"  # the parent's inputs are visible
    assert result.state["tag"] == "c"  # the subgraph's inputs were set on its state
    assert "__ethan__" not in result.state


async def test_subgraph_nodes_report_events_under_the_subgraph_nodes_id(ethan):
    _, events = await ethan.run(COLLECT, {"origin": "cli"})
    assert "collect/add" in {e.node_id for e in events if e.event_type == "completed"}


async def test_a_declared_subgraph_input_must_be_given(ethan):
    text = COLLECT.replace("inputs: {tag: c}", "inputs: {}")
    result, _ = await ethan.run(text, {"origin": "cli"})
    assert result.status == "failed"
    assert result.error["code"] == "missing_input"
    assert "subgraph 'collect' needs the input(s) 'tag'" in result.error["message"]


RECURSIVE = """
    state:
      init: {depth: 0}
    subgraphs:
      dive:
        nodes:
          - {id: deeper, type: noop, map: {set: {depth: "{{ state.depth + 1 }}"}}}
          - id: more
            type: router
            cases: [{when: {"<": [{var: state.depth}, LIMIT]}, to: again}]
          - {id: again, type: subgraph, graph: dive}
        edges:
          - {from: deeper, to: more}
    graph:
      nodes:
        - {id: dive, type: subgraph, graph: dive}
"""


async def test_recursion_within_the_depth_limit_completes(ethan):
    result, _ = await ethan.run(RECURSIVE.replace("LIMIT", "3"))
    assert result.status == "completed", result.error
    assert result.state["depth"] == 3


async def test_recursion_past_the_depth_limit_fails_with_max_subgraph_depth(ethan):
    result, _ = await ethan.run(RECURSIVE.replace("LIMIT", "100"), max_subgraph_depth=4)
    assert result.status == "failed"
    assert result.error["code"] == "max_subgraph_depth"
    assert "past the limit of 4" in result.error["message"]
    assert "id 'dive/again/again/again'" in result.error["message"]  # where it was raised
    assert result.error["inner"]["code"] == "max_subgraph_depth"


async def test_the_default_depth_limit_is_8(ethan):
    result, _ = await ethan.run(RECURSIVE.replace("LIMIT", "100"))
    assert result.error["code"] == "max_subgraph_depth"
    assert "9 levels deep, past the limit of 8" in result.error["message"]


async def test_a_subgraph_tool_runs_the_subgraph_and_normalizes_its_outputs(ethan):
    text = """
        tools:
          - {id: collect_tool, kind: subgraph, impl: collect, config: {tag: d}}
        subgraphs:
          collect:
            inputs: [tag]
            outputs: [added]
            nodes:
              - {id: add, type: noop, map: {set: {added: "{{ inputs.tag }}"}}}
        graph:
          nodes:
            - id: use
              type: tool
              uses: collect_tool
              map: {set: {got: "{{ result.json.added }}"}}
    """
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state["got"] == "d"
    response = result.outputs["use"]["result"]
    assert response["status"] == 200 and response["error"] is None


async def test_a_subgraph_timeout_is_enforced(ethan):
    (ethan.folder / "tools.py").write_text("import time\ndef nap():\n    time.sleep(1)\n")
    text = """
        tools:
          - {id: nap, kind: python, impl: "tools.py#nap"}
        subgraphs:
          slow:
            timeout: {seconds: 0.2}
            nodes:
              - {id: wait, type: tool, uses: nap}
        graph:
          nodes:
            - {id: call, type: subgraph, graph: slow}
    """
    result, _ = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "graph_timeout"


async def test_two_arrivals_at_one_subgraph_node_run_one_after_the_other(ethan):
    text = """
        state:
          init: {count: 0}
        subgraphs:
          bump:
            nodes:
              - {id: add, type: noop, map: {set: {count: "{{ state.count + 1 }}"}}}
        graph:
          nodes:
            - id: fan
              type: router
              cases:
                - {when: {"==": [1, 1]}, to: sub}
                - {when: {"==": [2, 2]}, to: sub}
            - {id: sub, type: subgraph, graph: bump}
    """
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state["count"] == 2
