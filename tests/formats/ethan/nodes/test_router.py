"""ethan-router: every matching case fires; else the default; else its own edges."""

from __future__ import annotations

GRAPH = """
    state:
      init: {seen: []}
    graph:
      inputs: [n]
      nodes:
        - id: route
          type: router
          cases:
            - {when: {">": ["{{ inputs.n }}", 10]}, to: big}
            - {when: {"==": [{"%": [{var: inputs.n}, 2]}, 0]}, to: even}
          DEFAULT
        - {id: big, type: noop, map: {merge: {seen: [big]}}}
        - {id: even, type: noop, map: {merge: {seen: [even]}}}
        - {id: fallback, type: noop, map: {merge: {seen: [fallback]}}}
        - {id: edge, type: noop, map: {merge: {seen: [edge]}}}
      edges:
        - {from: route, to: edge}
        - {from: fallback, to: edge}
"""


async def run(ethan, n: int, default: bool = True) -> list[str]:
    text = GRAPH.replace("DEFAULT", "default: fallback" if default else "")
    result, _ = await ethan.run(text, {"n": n})
    assert result.status == "completed", result.error
    return sorted(result.state["seen"])


async def test_all_matching_cases_fire(ethan):
    assert await run(ethan, 12) == ["big", "even"]


async def test_one_matching_case(ethan):
    assert await run(ethan, 11) == ["big"]


async def test_the_default_fires_when_no_case_matches(ethan):
    assert await run(ethan, 3) == ["edge", "fallback"]


async def test_without_a_default_the_routers_edges_are_taken(ethan):
    text = GRAPH.replace("DEFAULT", "").replace(
        "        - {id: fallback,", "        - {id: unused,"
    )
    text = text.replace("{from: fallback, to: edge}", "{from: unused, to: edge}")
    result, _ = await ethan.run(text, {"n": 3})
    assert "edge" in result.state["seen"]
    assert result.outputs["route"]["result"] == {"targets": ["edge"]}


async def test_a_router_may_lead_back_to_an_earlier_node(ethan):
    text = """
        state:
          init: {n: 0}
        graph:
          max_steps: 50
          nodes:
            - {id: begin, type: noop, map: {set: {began: true}}}
            - {id: count, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}
            - id: again
              type: router
              cases: [{when: {"<": [{var: state.n}, 5]}, to: count}]
          edges:
            - {from: begin, to: count}
            - {from: count, to: again}
    """
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state["n"] == 5
    assert result.steps == 2 + 5 * 2
