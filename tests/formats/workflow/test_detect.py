"""Which documents are workflows: detected by their shape or file name, never a native graph."""

from pathlib import Path

from nodeloom.formats import detect_format, read_graph
from nodeloom.formats.workflow import loader
from nodeloom.testing.builders import edge, graph, node


def test_a_workflow_with_connections_is_detected(wf):
    document = wf.doc(wf.start(), wf.agent("a"), wf.link("start", "a"))
    assert detect_format(document) is loader


def test_a_workflow_with_edges_and_x_y_positions_is_detected(wf):
    document = wf.doc(wf.start(), wf.agent("a"))
    document["edges"] = [wf.link("start", "a")]
    del document["connections"]
    assert detect_format(document) is loader


def test_a_file_named_workflow_json_is_a_workflow_whatever_its_shape(tmp_path):
    assert loader.detect({"nodes": []}, Path(tmp_path / "draft.workflow.json"))
    assert loader.detect({"nodes": "oops"}, Path("x.workflow.yaml"))


def test_a_native_graph_is_not_a_workflow_even_with_agent_and_approval_nodes():
    native = graph(node("a", "agent"), node("ok", "approval"), edge("a", "ok"))
    assert detect_format(native) is None
    placed = {**native, "nodes": [{**n, "position": {"x": 1, "y": 2}} for n in native["nodes"]]}
    assert detect_format(placed) is None


def test_nodes_placed_with_x_and_y_but_of_no_workflow_type_are_not_a_workflow():
    assert not loader.detect({"nodes": [{"id": "a", "type": "const", "x": 0, "y": 0}]}, None)


def test_a_converted_workflow_reads_back_as_a_native_graph(wf):
    converted, fmt = read_graph(wf.doc(wf.start(), wf.agent("a"), wf.link("start", "a")))
    assert fmt == "workflow"
    again, fmt = read_graph(converted)
    assert fmt == "native" and again == converted


def test_documents_that_are_not_objects_are_not_workflows():
    assert not loader.detect([{"id": "start", "type": "start"}], None)
    assert not loader.detect({"nodes": {"start": {}}}, None)
