"""ethan-on-error: a node's `on_error` routes its failure instead of failing the run."""

from __future__ import annotations

GRAPH = """
    state:
      init: {seen: []}
    tools:
      - {id: boom, kind: python, impl: "tools.py#boom"}
    graph:
      nodes:
        - id: risky
          type: tool
          uses: boom
          ON_ERROR
        - {id: begin, type: noop, map: {merge: {seen: [begin]}}}
        - {id: fallback, type: noop, map: {merge: {seen: [fallback]}}}
        - {id: on_failure, type: noop, map: {merge: {seen: [on_failure], why: "{{ 'x' }}"}}}
        - {id: on_success, type: noop, map: {merge: {seen: [on_success]}}}
      edges:
        - {from: begin, to: risky}
        - {from: risky, to: on_failure, when: {"!!": [{var: result.error}]}}
        - {from: risky, to: on_success, when: {"!": [{var: result.error}]}}
        - {from: on_success, to: fallback, when: {"==": [1, 2]}}  # so it is no entry node
"""


def graph(ethan, on_error: str) -> str:
    (ethan.folder / "tools.py").write_text("def boom():\n    raise ValueError('no')\n")
    return GRAPH.replace("ON_ERROR", on_error)


async def test_the_helper_is_wired_to_the_error_port(ethan):
    flow = ethan.load(graph(ethan, "on_error: {to: fallback}"))
    document = flow.graph.to_json()
    risky = next(n for n in document["nodes"] if n["id"] == "risky")
    assert risky["data"]["on_error"] == "error_output"
    helper = next(n for n in document["nodes"] if n["id"] == "risky.on_error")
    assert helper["type"] == "ethan-on-error"
    assert {"source": "risky", "sourceHandle": "error", "target": "risky.on_error"}.items() <= next(
        e for e in document["edges"] if e["target"] == "risky.on_error"
    ).items()


async def test_resume_evaluates_the_nodes_edges_with_the_error_as_result(ethan):
    result, _ = await ethan.run(graph(ethan, "on_error: {resume: true}"))
    assert result.status == "completed", result.error
    assert result.state["seen"] == ["begin", "on_failure"]
    error = result.outputs["risky.on_error"]["result"]["error"]
    assert error["code"] == "node_failed" and error["node_id"] == "risky"
    assert "ValueError: no" in error["message"]


async def test_to_fires_only_the_fallback(ethan):
    result, _ = await ethan.run(graph(ethan, "on_error: {to: fallback}"))
    assert result.state["seen"] == ["begin", "fallback"]


async def test_without_on_error_the_run_fails_naming_node_type_tool_and_cause(ethan):
    result, _ = await ethan.run(graph(ethan, ""))
    assert result.status == "failed"
    message = result.error["message"]
    assert message.startswith("node 'risky' (ethan-tool, id 'risky') failed: ")
    assert "tool node 'risky' (tool 'boom'): ValueError: no" in message
    assert result.error["ethan_node"] == {"id": "risky", "type": "tool"}


async def test_a_graph_timeout_is_never_routed_by_on_error(ethan):
    (ethan.folder / "tools.py").write_text("import time\ndef boom():\n    time.sleep(0.5)\n")
    text = GRAPH.replace("ON_ERROR", "on_error: {to: fallback}").replace(
        "graph:\n", "graph:\n      timeout: {seconds: 0.2}\n", 1
    )
    result, _ = await ethan.run(text)
    assert result.status == "failed"
    assert result.error["code"] == "graph_timeout"
    assert "fallback" not in result.state.get("seen", [])
