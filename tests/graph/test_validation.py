"""Every malformed or invalid graph gives one clear, located error; all are reported."""

import json

import pytest

from nodeloom import GraphError
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import Registry
from nodeloom.testing.builders import edge, graph, node


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.discover(use_entry_points=False, use_environment=False)


def problems(document, registry):
    try:
        return validate(document, registry).issues
    except GraphError as exc:  # unreadable documents fail before validation
        return exc.issues


def one(document, registry):
    found = problems(document, registry)
    assert len(found) == 1, found
    return found[0]


def test_a_valid_graph_has_no_issues(registry):
    doc = graph(
        node("s", "chat-start"),
        node("t", "prompt-template", template="{{ $json }}"),
        edge("s", "t"),
    )
    assert problems(doc, registry) == []


def test_malformed_json_text_is_reported_with_line_and_column(tmp_path, registry):
    path = tmp_path / "bad.json"
    path.write_text('{"nodes": [}')
    issue = one(str(path), registry)
    assert issue.code == "invalid_json"
    assert "line 1, column 12" in issue.message


def test_a_missing_file_is_reported(tmp_path, registry):
    issue = one(str(tmp_path / "nope.json"), registry)
    assert issue.code == "file_not_found"


def test_a_node_without_type_is_located(registry):
    issue = one({"nodes": [{"id": "a", "data": {}}], "edges": []}, registry)
    assert (issue.code, issue.node_id, issue.field) == ("invalid_graph", "a", "type")


def test_an_unknown_node_type_suggests_the_closest(registry):
    issue = one(graph(node("a", "prompt-templte", template="x")), registry)
    assert issue.code == "unknown_node_type"
    assert "did you mean 'prompt-template'?" in issue.message


def test_duplicate_ids_and_names_are_errors(registry):
    doc = graph(
        node("a", "chat-start"),
        node("a", "chat-start"),
        node("b", "chat-start", name="Same"),
        node("c", "chat-start", name="Same"),
    )
    codes = sorted(i.code for i in problems(doc, registry))
    assert codes == ["duplicate_node_id", "duplicate_node_name"]


def test_a_dangling_edge_names_the_missing_node(registry):
    issue = one(graph(node("start", "chat-start"), edge("start", "ghost")), registry)
    assert issue.code == "dangling_edge"
    assert issue.field == "target" and "'ghost'" in issue.message


def test_an_unknown_handle_lists_the_valid_ports(registry):
    doc = graph(
        node("s", "chat-start"), node("t", "prompt-template", template="x"), edge("s", "t", "out")
    )
    issue = one(doc, registry)
    assert issue.code == "unknown_handle"
    assert "did you mean 'output'?" in issue.message and "valid output ports: output" in (
        issue.message
    )


def test_an_incompatible_socket_is_refused_with_the_reason(registry, tmp_path):
    from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

    del NodeDefinition, Parameter, Port
    pack = tmp_path / "pack"
    for name, definition in {
        "agentish": 'NodeDefinition(id="agentish", name="A", category="core", inputs=(), '
        'outputs=(Port("agent", socket="agent"),))',
        "takes_float": 'NodeDefinition(id="takes-float", name="F", category="data", '
        'parameters=(Parameter("t", "number", hybrid=True, socket="float"),))',
    }.items():
        folder = pack / name
        folder.mkdir(parents=True)
        (folder / "definition.py").write_text(
            "from nodeloom.plugins.contract import NodeDefinition, Parameter, Port\n"
            f"definition = {definition}\n"
        )
        (folder / "executor.py").write_text(
            f"class E:\n    node_type = {json.dumps(name.replace('_', '-'))}\n"
            "    async def execute(self, data, inputs, context): ...\nexecutor = E()\n"
        )
    local = Registry.discover(paths=[str(pack)], use_entry_points=False, use_environment=False)
    doc = graph(
        node("a", "agentish"),
        node("s", "chat-start"),
        node("f", "takes-float"),
        edge("s", "f"),
        edge("a", "f", "agent", "t"),
    )
    issue = one(doc, local)
    assert issue.code == "incompatible_socket"
    assert "a 'agent' socket cannot connect to a 'float' socket" in issue.message


def test_a_cycle_is_reported_with_its_path(registry):
    doc = graph(node("a", "merge"), node("b", "merge"), edge("a", "b"), edge("b", "a"))
    issue = one(doc, registry)
    assert issue.code == "cycle"
    assert "'a' -> 'b' -> 'a'" in issue.message


def test_two_edges_into_a_single_input_port_need_a_merge(registry):
    doc = graph(
        node("s1", "chat-start"),
        node("s2", "chat-start", name="S2"),
        node("t", "prompt-template", template="x"),
        edge("s1", "t"),
        edge("s2", "t"),
    )
    issue = one(doc, registry)
    assert issue.code == "multiple_edges" and "Merge" in issue.message


def test_an_unknown_parameter_is_located_with_a_suggestion(registry):
    issue = one(graph(node("t", "prompt-template", templat="x", template="y")), registry)
    assert (issue.code, issue.field) == ("unknown_parameter", "templat")
    assert "did you mean 'template'?" in issue.message


def test_a_wrong_parameter_type_and_a_missing_required_parameter(registry):
    doc = graph(node("m", "merge", mode="zip"), node("t", "prompt-template"))
    found = {(i.code, i.node_id, i.field) for i in problems(doc, registry)}
    assert found == {("invalid_parameter", "m", "mode"), ("missing_parameter", "t", "template")}


def test_a_string_parameter_takes_a_json_number_only_when_it_allows_numbers():
    from nodeloom.graph.parameters import check_value
    from nodeloom.plugins import Parameter

    plain, seconds = Parameter("label", "string"), Parameter("every", "string", allow_number=True)
    assert check_value(plain, 30) == ["'label' must be a string, got an integer"]
    assert check_value(seconds, 30) == [] and check_value(seconds, 1.5) == []
    assert check_value(seconds, True) == ["'every' must be a string, got a boolean"]
    assert check_value(seconds, [30]) == ["'every' must be a string, got a list"]


def test_bad_settings_are_reported(registry):
    doc = graph(
        node(
            "s", "chat-start", on_error="ignore", timeout=-1, retry={"max_attempts": 0, "bogus": 1}
        )
    )
    fields = sorted(i.field for i in problems(doc, registry))
    assert fields == ["on_error", "retry.bogus", "retry.max_attempts", "timeout"]


def test_validate_reports_every_problem_at_once(registry):
    doc = graph(
        node("a", "chat-start"),
        node("b", "nope"),
        node("c", "prompt-template", template="{{ $('ghost').item.json }}"),
        node("d", "prompt-template", template="{{ 1 + }}"),
        edge("a", "c"),
        edge("a", "zzz"),
        edge("c", "d", "out"),
    )
    codes = sorted(i.code for i in problems(doc, registry))
    assert codes == [
        "dangling_edge",
        "expression_syntax",
        "expression_unknown_node",
        "unknown_handle",
        "unknown_node_type",
    ]


def test_positions_and_react_flow_ui_keys_are_tolerated(registry):
    doc = graph(node("a", "chat-start"))
    doc["nodes"][0].update({"position": {"x": 1, "y": 2}, "selected": True, "width": 100})
    assert problems(doc, registry) == []


def test_a_dangling_edge_beside_an_expression_is_reported_not_a_crash(registry):
    doc = graph(
        node("a", "chat-start"),
        node("t", "prompt-template", template="{{ $json }}"),
        edge("a", "t"),
        edge("ghost", "t", "output", "input"),
    )
    codes = sorted(i.code for i in problems(doc, registry))
    assert codes == ["dangling_edge"]
