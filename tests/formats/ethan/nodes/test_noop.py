"""ethan-noop: only the map, then the routes."""

from __future__ import annotations


async def test_a_noop_sets_merges_and_deletes_paths(ethan):
    text = """
        state:
          init: {answer: {text: old, tmp: 1}, log: [a]}
        graph:
          nodes:
            - id: tidy
              type: noop
              map:
                set: {answer.text: "{{ state.answer.text | upper }}"}
                merge: {log: [a, b]}
                delete: [answer.tmp]
    """
    result, _ = await ethan.run(text)
    assert result.state == {"answer": {"text": "OLD"}, "log": ["a", "b"]}
    assert result.outputs["tidy"] == {"result": {}}


async def test_map_templates_see_the_state_before_the_map(ethan):
    text = """
        state:
          init: {n: 1}
        graph:
          nodes:
            - id: step
              type: noop
              map:
                set: {n: "{{ state.n + 1 }}", was: "{{ state.n }}"}
    """
    result, _ = await ethan.run(text)
    assert result.state == {"n": 2, "was": 1}


async def test_state_keys_are_names_of_their_own_in_templates(ethan):
    text = """
        state:
          init: {request: hello}
        graph:
          nodes:
            - {id: step, type: noop, map: {set: {echo: "{{ request }}"}}}
    """
    result, _ = await ethan.run(text)
    assert result.state["echo"] == "hello"


async def test_a_failing_template_names_the_node_and_is_not_retried(ethan):
    text = """
        graph:
          nodes:
            - id: step
              type: noop
              retry: {max_attempts: 3, backoff: 0}
              map: {set: {x: "{{ state.missing }}"}}
    """
    result, events = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "template_error"
    assert result.error["node_id"] == "step"
    assert "noop node 'step': map: template" in result.error["message"]
    assert "missing" in result.error["message"]
    assert not [e for e in events if e.event_type == "progress"]


async def test_edge_conditions_choose_the_next_nodes(ethan):
    text = """
        state:
          init: {n: 5, seen: []}
        graph:
          nodes:
            - {id: a, type: noop, map: {set: {n: 6}}}
            - {id: big, type: noop, map: {merge: {seen: [big]}}}
            - {id: small, type: noop, map: {merge: {seen: [small]}}}
            - {id: always, type: noop, map: {merge: {seen: [always]}}}
          edges:
            - {from: a, to: big, when: {">": [{var: state.n}, 5]}}
            - {from: a, to: small, when: {"<=": ["{{ state.n }}", 5]}}
            - {from: a, to: always}
    """
    result, _ = await ethan.run(text)
    assert sorted(result.state["seen"]) == ["always", "big"]
    assert "small" not in result.outputs
