"""ethan-loop: the body runs in the loop's inner graph; until, max_iterations, errors."""

from __future__ import annotations

import pytest

LOOP = """
    state:
      init: {n: 0, after: false}
    tools:
      - {id: flaky, kind: python, impl: "tools.py#flaky"}
    graph:
      nodes:
        - id: repeat
          type: loop
          body: BODY
          UNTIL
          max_iterations: 4
        - BODY_NODE
        - {id: after, type: noop, map: {set: {after: true}}}
        - {id: rescue, type: noop, map: {set: {rescued: true}}}
      edges:
        - {from: repeat, to: after}
        - {from: after, to: rescue, when: {"==": [1, 2]}}
"""
STEP = '{id: step, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}'
FAIL = """id: fail
          type: tool
          uses: flaky
          inputs: {n: "{{ state.n }}"}
          ON_ERROR
          map: {set: {n: "{{ state.n + 1 }}"}}"""

TOOLS = """
def flaky(n):
    if n >= 1:
        return {"error": {"message": f"no more at {n}"}}
    return {"json": {"n": n}}
"""


@pytest.fixture(autouse=True)
def tools_file(ethan):
    (ethan.folder / "tools.py").write_text(TOOLS)


def loop(body: str = "step", until: str = "", on_error: str = "") -> str:
    node = STEP if body == "step" else FAIL.replace("ON_ERROR", on_error)
    return LOOP.replace("BODY_NODE", node).replace("BODY", body).replace("UNTIL", until)


async def test_a_loop_without_until_runs_max_iterations_then_goes_on(ethan):
    result, events = await ethan.run(loop())
    assert result.status == "completed", result.error  # the original failed here
    assert result.state["n"] == 4
    assert result.state["after"] is True
    progress = [e.data for e in events if e.event_type == "progress" and e.node_id == "repeat"]
    assert progress[-1] == {"iteration": 4, "of": 4}


async def test_until_ends_the_loop_early(ethan):
    result, _ = await ethan.run(loop(until='until: {">=": ["{{ state.n }}", 2]}'))
    assert result.state["n"] == 2 and result.state["after"] is True


async def test_an_until_that_never_holds_fails_the_loop(ethan):
    result, _ = await ethan.run(loop(until='until: {">": [{var: state.n}, 99]}'))
    assert result.status == "failed"
    assert result.error["code"] == "loop_max_iterations"
    assert result.error["node_id"] == "repeat"


async def test_the_body_runs_only_inside_the_loop(ethan):
    result, events = await ethan.run(loop())
    assert "step" not in result.outputs
    ids = {e.node_id for e in events if e.event_type == "completed"}
    assert "repeat/step" in ids and "step" not in ids


async def test_a_failing_body_without_on_error_fails_the_loop(ethan):
    result, _ = await ethan.run(loop(body="fail"))
    assert result.status == "failed"
    assert result.error["node_id"] == "repeat"
    assert result.error["code"] == "tool_error"
    assert "no more at 1" in result.error["message"]


async def test_a_body_with_on_error_resume_goes_on_iterating(ethan):
    result, _ = await ethan.run(loop(body="fail", on_error="on_error: {resume: true}"))
    assert result.status == "completed", result.error
    assert result.state["n"] == 1  # the failed iterations mapped nothing
    assert result.state["after"] is True


async def test_a_body_with_on_error_to_stops_the_loop_and_goes_there(ethan):
    result, _ = await ethan.run(loop(body="fail", on_error="on_error: {to: rescue}"))
    assert result.status == "completed", result.error
    assert result.state["rescued"] is True
    assert result.state["after"] is False
    assert result.state["n"] == 1


async def test_until_sees_the_bodys_result(ethan):
    (ethan.folder / "tools.py").write_text("def count(n):\n    return {'json': {'n': n + 1}}\n")
    text = """
        state:
          init: {n: 0}
        tools:
          - {id: count, kind: python, impl: "tools.py#count"}
        graph:
          nodes:
            - id: repeat
              type: loop
              body: step
              until: {">=": [{var: result.json.n}, 3]}
            - id: step
              type: tool
              uses: count
              inputs: {n: "{{ state.n }}"}
              map: {set: {n: "{{ result.json.n }}"}}
    """
    result, _ = await ethan.run(text)
    assert result.state["n"] == 3
    assert result.outputs["repeat"]["result"]["json"] == {"n": 3}
