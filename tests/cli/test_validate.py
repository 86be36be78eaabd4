"""`nodeloom validate FILE`: every problem printed, each located; exit 2 if any, else 0."""

from __future__ import annotations

import json

import pytest

from nodeloom.testing.builders import edge, graph, node

pytestmark = pytest.mark.e2e


@pytest.fixture
def three_problems(write_graph):
    """An unknown type, a bad enum parameter and an edge to a missing node."""
    return write_graph(
        "three_problems",
        graph(
            node("start", "chat-start"),
            node("x", "prompt-templat"),
            node("convert", "type-converter", to="roman-numeral"),
            edge("start", "convert"),
            edge("start", "ghost"),
        ),
    )


def test_a_valid_graph_prints_valid_and_exits_0(nodeloom, greeting):
    process = nodeloom("validate", str(greeting))
    assert process.returncode == 0, process.stderr
    assert process.stdout == f"{greeting}: valid\n"


def test_every_problem_is_printed_once_located_on_its_node_edge_and_field(nodeloom, three_problems):
    process = nodeloom("validate", str(three_problems))
    assert process.returncode == 2
    heading, *problems = process.stderr.splitlines()
    assert heading == "The graph is invalid (3 problems):"
    assert problems == [
        "  • [unknown_node_type] node 'x', field 'type': unknown node type 'prompt-templat'; "
        "did you mean 'prompt-template'?",
        "  • [invalid_parameter] node 'convert', field 'to': 'to' must be one of string, "
        "number, integer, boolean, json, text, got 'roman-numeral'",
        "  • [dangling_edge] edge 'start.output->ghost.input', field 'target': the edge's "
        "target 'ghost' is not a node of this graph",
    ]


def test_json_lists_every_problem_as_a_code_node_field_message_record(nodeloom, three_problems):
    process = nodeloom("validate", str(three_problems), "--json")
    assert process.returncode == 2
    [line] = [json.loads(text) for text in process.stdout.splitlines()]
    assert (line["type"], line["status"]) == ("result", "invalid")
    located = [(e["code"], e["node_id"], e["field"]) for e in line["errors"]]
    assert located == [
        ("unknown_node_type", "x", "type"),
        ("invalid_parameter", "convert", "to"),
        ("dangling_edge", None, "target"),
    ]
    assert line["errors"][2]["edge_id"] == "start.output->ghost.input"
    assert all(e["message"] for e in line["errors"])


def test_json_for_a_valid_graph_says_valid_with_no_errors(nodeloom, greeting):
    process = nodeloom("validate", str(greeting), "--json")
    assert process.returncode == 0
    assert json.loads(process.stdout) == {"type": "result", "status": "valid", "errors": []}


def test_a_malformed_file_is_reported_as_invalid_json_with_exit_2(nodeloom, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{nodes: }", encoding="utf-8")
    process = nodeloom("validate", str(path), "--json")
    assert process.returncode == 2
    [error] = json.loads(process.stdout)["errors"]
    assert error["code"] == "invalid_json"
    assert error["message"].startswith(f"{path} is not valid JSON: ")


def test_a_missing_file_is_reported_with_exit_2(nodeloom, tmp_path):
    missing = tmp_path / "nowhere.json"
    process = nodeloom("validate", str(missing))
    assert process.returncode == 2
    assert f"[file_not_found] no such file: {missing}" in process.stderr


def test_a_file_that_is_a_directory_is_reported_as_unreadable_with_exit_2(nodeloom, tmp_path):
    process = nodeloom("validate", str(tmp_path), "--json")
    assert process.returncode == 2
    [error] = json.loads(process.stdout)["errors"]
    assert error["code"] == "file_unreadable"


def test_validate_never_runs_the_graph(nodeloom, sleeping_code):
    process = nodeloom("validate", str(sleeping_code), timeout=20)
    assert process.returncode == 0, process.stderr
    assert process.stdout == f"{sleeping_code}: valid\n"


def test_a_credential_in_a_parameter_that_is_not_secret_capable_is_a_problem(nodeloom, write_graph):
    leaky = write_graph(
        "leaky",
        graph(
            node("start", "chat-start"),
            node("say", "prompt-template", name="Say", template="{{ $credentials.key }}"),
            node(
                "call",
                "http-request",
                url="https://api.example/x",
                headers={"Authorization": "Bearer {{ $credentials.key }}"},
            ),
            edge("start", "say"),
            edge("say", "call"),
        ),
    )
    process = nodeloom("validate", str(leaky), "--json")
    assert process.returncode == 2
    [line] = [json.loads(text) for text in process.stdout.splitlines()]
    [problem] = line["errors"]  # the header of HTTP Request is fine
    assert (problem["code"], problem["node_id"], problem["field"]) == (
        "credential_placement",
        "say",
        "template",
    )
    assert "HTTP Request's `headers`" in problem["message"]
