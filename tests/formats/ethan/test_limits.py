"""Limits an Ethan graph sets: the step limit, the graph's timeout, node timeouts."""

from __future__ import annotations

FOREVER = """
    state: {init: {n: 0}}
    graph:
      MAX_STEPS
      nodes:
        - {id: begin, type: noop, map: {set: {n: 0}}}
        - {id: tick, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}
        - id: again
          type: router
          cases: [{when: {">=": [{var: state.n}, 0]}, to: tick}]
      edges:
        - {from: begin, to: tick}
        - {from: tick, to: again}
"""


async def test_max_steps_bounds_a_cycle_through_a_router(ethan):
    result, _ = await ethan.run(FOREVER.replace("MAX_STEPS", "max_steps: 9"))
    assert result.status == "failed"
    assert result.error["code"] == "max_steps_exceeded"
    assert result.steps == 11  # the start node and 9 Ethan steps ran; the 10th was refused
    assert result.state["n"] == 4


async def test_the_default_step_limit_is_200(ethan):
    result, _ = await ethan.run(FOREVER.replace("MAX_STEPS", ""))
    assert result.error["code"] == "max_steps_exceeded"
    assert result.steps == 202


async def test_the_graph_timeout_is_enforced(ethan):
    (ethan.folder / "tools.py").write_text("import time\ndef nap():\n    time.sleep(0.3)\n")
    text = """
        tools: [{id: nap, kind: python, impl: "tools.py#nap"}]
        graph:
          timeout: {seconds: 0.5}
          nodes:
            - {id: one, type: tool, uses: nap}
            - {id: two, type: tool, uses: nap}
            - {id: three, type: tool, uses: nap}
          edges:
            - {from: one, to: two}
            - {from: two, to: three}
    """
    result, _ = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "graph_timeout"
    assert result.error["node_id"] == "two"
    assert "three" not in result.outputs


async def test_a_node_timeout_is_enforced_not_just_accepted(ethan):
    (ethan.folder / "tools.py").write_text("import time\ndef nap():\n    time.sleep(0.5)\n")
    text = """
        tools: [{id: nap, kind: python, impl: "tools.py#nap", timeout: {seconds: 0.1}}]
        graph:
          nodes:
            - {id: one, type: tool, uses: nap}
    """
    result, _ = await ethan.run(text)
    assert result.error["code"] == "node_timeout"
    assert "0.1 s" in result.error["message"]
