"""What an Ethan file becomes: a native graph of each-nodes whose routes are ports."""

from __future__ import annotations

import json

from nodeloom.formats import FormatOptions, detect_format, read_graph
from nodeloom.formats.ethan import loader

GRAPH = """
    meta: {name: converted}
    state: {init: {n: 0}}
    graph:
      outputs: [n]
      max_steps: 20
      nodes:
        - {id: first, type: noop, map: {set: {n: 1}}}
        - {id: second, type: noop, map: {set: {n: 2}}}
        - id: branch
          type: router
          cases: [{when: {">": ["{{ state.n }}", 1]}, to: done}]
          default: again
        - {id: again, type: loop, body: body, max_iterations: 2}
        - {id: body, type: noop, map: {set: {n: 3}}}
        - {id: after_body, type: noop, map: {set: {n: 4}}}
        - {id: done, type: noop, map: {set: {n: 5}}, on_error: {to: rescue}}
        - {id: rescue, type: noop, map: {set: {n: 6}}}
      edges:
        - {from: first, to: branch}
        - {from: body, to: after_body}
        - {from: again, to: done, when: {"==": [1, 1]}}
"""


def document(ethan, text: str = GRAPH, **options) -> dict:
    path = ethan.write(text)
    converted, name = read_graph(path, FormatOptions(base_dir=ethan.folder, **options))
    assert name == "ethan"
    return converted


def by_id(converted: dict) -> dict:
    return {node["id"]: node for node in converted["nodes"]}


def test_every_node_has_activation_each(ethan):
    converted = document(ethan)
    assert {node["data"]["activation"] for node in converted["nodes"]} == {"each"}
    body = by_id(converted)["again"]["data"]["body"]
    assert body["nodes"][0]["data"]["activation"] == "each"


def test_the_start_node_leads_to_the_entry_nodes_in_file_order(ethan):
    converted = document(ethan)
    start = by_id(converted)["__start__"]
    assert start["type"] == "ethan-start"
    assert start["data"]["routes"] == ["first", "second"]
    assert [
        (e["sourceHandle"], e["target"]) for e in converted["edges"] if e["source"] == "__start__"
    ] == [
        ("route-0", "first"),
        ("route-1", "second"),
    ]


def test_each_route_is_a_port_and_its_condition_is_in_the_spec(ethan):
    node = by_id(document(ethan))["branch"]
    assert node["type"] == "ethan-router"
    assert node["data"]["routes"] == ["done", "again"]
    spec = json.loads(node["data"]["spec"])
    assert spec["routes"] == [
        {"to": "done", "when": {">": ["{{ state.n }}", 1]}, "kind": "case"},
        {"to": "again", "when": None, "kind": "default"},
    ]


def test_the_loop_body_is_an_inner_graph_and_only_there(ethan):
    converted = document(ethan)
    nodes = by_id(converted)
    assert "body" not in nodes and "after_body" not in nodes  # reachable only inside the loop
    inner = nodes["again"]["data"]["body"]
    assert [n["id"] for n in inner["nodes"]] == ["body"]
    assert inner["nodes"][0]["data"]["routes"] == []  # a body's own edges are not taken


def test_on_error_becomes_an_error_port_and_a_routing_node(ethan):
    nodes = by_id(document(ethan))
    assert nodes["done"]["data"]["on_error"] == "error_output"
    helper = nodes["done.on_error"]
    assert helper["type"] == "ethan-on-error"
    assert helper["data"]["routes"] == ["rescue"]


def test_limits_variables_name_and_format(ethan):
    converted = document(ethan)
    assert converted["limits"] == {"max_steps": 21}  # 20 Ethan steps and the start node
    assert converted["variables"] == {"ethan": {"inputs": [], "outputs": ["n"]}}
    assert converted["name"] == "converted"
    assert converted["format"] == "nodeloom"


def test_the_default_step_limit_is_200(ethan):
    converted = document(ethan, GRAPH.replace("max_steps: 20", ""))
    assert converted["limits"] == {"max_steps": 201}


def test_subgraphs_nest_to_the_depth_limit(ethan):
    text = """
        subgraphs:
          again:
            nodes:
              - {id: inner, type: subgraph, graph: again}
        graph:
          nodes:
            - {id: outer, type: subgraph, graph: again}
    """
    converted = document(ethan, text, max_subgraph_depth=3)
    node, depth = by_id(converted)["outer"], 1
    while "graph" in node["data"]:
        spec = json.loads(node["data"]["spec"])
        assert spec["depth"] == depth and not spec["depth_exceeded"]
        node, depth = node["data"]["graph"]["nodes"][0], depth + 1
    spec = json.loads(node["data"]["spec"])
    assert spec["depth"] == 4 and spec["depth_exceeded"] is True


def test_python_file_references_are_made_absolute_against_the_yaml_folder(ethan):
    (ethan.folder / "tools.py").write_text("def f():\n    return 1\n")
    text = """
        tools: [{id: f, kind: python, impl: tools.py#f}]
        graph:
          nodes: [{id: call, type: tool, uses: f}]
    """
    spec = json.loads(by_id(document(ethan, text))["call"]["data"]["spec"])
    assert spec["tool"]["impl"] == f"{ethan.folder.resolve() / 'tools.py'}#f"


def test_detection():
    assert loader.detect({"graph": {"nodes": []}, "meta": {}}, None)
    assert not loader.detect({"nodes": [], "edges": []}, None)
    assert not loader.detect({"graph": "x"}, None)
    assert detect_format({"graph": {"nodes": [{"id": "a", "type": "noop"}]}}) is loader
    assert detect_format({"meta": {}, "graph": {"nodes": []}}) is loader


def test_a_converted_graph_loads_again_as_a_native_graph(ethan):
    import nodeloom

    converted = document(ethan)
    _, name = read_graph(json.loads(json.dumps(converted)))
    assert name == "native"
    flow = nodeloom.load(converted)
    assert len(flow.graph.nodes) == len(converted["nodes"])
