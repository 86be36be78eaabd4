"""Expressions inside a running graph: rendering, priority, and every error."""

import pytest

from nodeloom import GraphError, RunStatus
from nodeloom.testing.builders import edge, graph, node


def issues_of(run, document):
    with pytest.raises(GraphError) as caught:
        run.load(document)
    return caught.value.issues


async def test_an_expression_reads_an_upstream_node_by_name_and_by_id(run):
    doc = graph(
        node("start", "chat-start"),
        node("data", "const", value={"user": {"name": "Ada"}}, name="Fetch User"),
        node("by_name", "const", value="{{ $('Fetch User').item.json.user.name }}"),
        node("by_id", "const", value="{{ $('data').item.json.user.name }}"),
        edge("start", "data"),
        edge("data", "by_name"),
        edge("data", "by_id"),
    )
    result, _ = await run(doc, "hi")
    assert result.outputs["by_name"]["output"] == "Ada"
    assert result.outputs["by_id"]["output"] == "Ada"


async def test_json_and_input_read_the_direct_spine_input(run):
    doc = graph(
        node("a", "const", value={"x": 2}),
        node("b", "const", value="{{ $json.x }}-{{ input.x }}"),
        edge("a", "b"),
    )
    result, _ = await run(doc)
    assert result.outputs["b"]["output"] == "2-2"


async def test_trigger_reads_the_runs_trigger_data(run):
    doc = graph(node("a", "const", value="{{ $trigger.message }}"))
    result, _ = await run(doc, "hello")
    assert result.outputs["a"]["output"] == "hello"


async def test_several_expressions_in_one_string_all_render(run):
    doc = graph(node("a", "const", value="{{ 1 + 1 }} and {{ 'b' }}"))
    result, _ = await run(doc)
    assert result.outputs["a"]["output"] == "2 and b"


async def test_a_string_that_is_exactly_one_expression_keeps_its_native_type(run):
    doc = graph(
        node("a", "const", value={"n": 3}), node("b", "const", value="{{ $json }}"), edge("a", "b")
    )
    result, _ = await run(doc)
    assert result.outputs["b"]["output"] == {"n": 3}


async def test_expressions_inside_json_parameters_render_in_place(run):
    doc = graph(node("a", "const", value={"list": ["{{ 2 * 2 }}", "plain"], "k": "{{ true }}"}))
    result, _ = await run(doc)
    assert result.outputs["a"]["output"] == {"list": [4, "plain"], "k": True}


async def test_a_wire_beats_an_expression_which_beats_the_inline_value(run):
    doc = graph(
        node("start", "const", value="x"),
        node("temp", "number", value=0.7),
        node("echo", "side-echo", temperature="{{ 0.2 }}", label="{{ 'expr' }}"),
        edge("start", "echo"),
        edge("temp", "echo", "value", "temperature"),
    )
    result, _ = await run(doc)
    assert result.outputs["echo"]["output"]["temperature"] == 0.7
    assert result.outputs["echo"]["output"]["label"] == "expr"


def test_a_syntax_error_is_reported_at_load_naming_node_and_parameter(run):
    [issue] = issues_of(run, graph(node("a", "const", value="{{ 1 + }}")))
    assert issue.code == "expression_syntax"
    assert (issue.node_id, issue.field) == ("a", "value")


def test_a_reference_to_an_unknown_node_is_a_load_error_with_a_suggestion(run):
    doc = graph(
        node("fetch", "const", value=1, name="Fetch"),
        node("b", "const", value="{{ $('Fetc').item.json }}"),
        edge("fetch", "b"),
    )
    [issue] = issues_of(run, doc)
    assert issue.code == "expression_unknown_node"
    assert "did you mean 'Fetch'?" in issue.message
    assert (issue.node_id, issue.field) == ("b", "value")


def test_a_reference_to_a_node_that_is_not_upstream_is_a_load_error(run):
    doc = graph(
        node("a", "const", value="{{ $('b').item.json }}"),
        node("b", "const", value=1),
        edge("a", "b"),
    )
    [issue] = issues_of(run, doc)
    assert issue.code == "expression_not_upstream"
    assert "not upstream" in issue.message


async def test_a_missing_field_is_a_run_time_error_naming_node_parameter_and_path(run):
    doc = graph(
        node("a", "const", value={"x": 1}, name="Source"),
        node("b", "const", value="{{ $json.y }}", name="Reader"),
        edge("a", "b"),
    )
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "expression_eval"
    message = result.error["message"]
    assert "'Reader'" in message and "parameter 'value'" in message and "'y'" in message


async def test_reading_a_node_that_was_skipped_is_a_run_time_error(run):
    doc = graph(
        node("start", "const", value=1),
        node("check", "route", port="a"),
        node("only_b", "const", value=2),
        node("join", "merge"),
        node("reader", "const", value="{{ $('only_b').item.json }}"),
        edge("start", "check"),
        edge("check", "only_b", "b"),
        edge("check", "join", "a"),
        edge("only_b", "join"),
        edge("join", "reader"),
    )
    result, _ = await run(doc)
    assert result.status is RunStatus.FAILED
    assert "was skipped" in result.error["message"]


async def test_the_coalescing_operator_gives_a_default_for_a_missing_field(run):
    doc = graph(
        node("a", "const", value={"x": 1}),
        node("b", "const", value="{{ $json.y ?? 'none' }}"),
        edge("a", "b"),
    )
    result, _ = await run(doc)
    assert result.outputs["b"]["output"] == "none"


async def test_variables_of_the_graph_are_available_as_vars(run):
    doc = graph(node("a", "const", value="{{ $vars.greeting }}"), variables={"greeting": "hey"})
    result, _ = await run(doc)
    assert result.outputs["a"]["output"] == "hey"


async def test_source_code_parameters_are_never_rendered_as_templates(run):
    doc = graph(
        node("a", "const", value=1),
        node("t", "json-transform", expression='$map([1, 2], function($v){{"n": $v}})'),
        edge("a", "t"),
    )
    result, _ = await run(doc)
    assert result.outputs["t"]["output"] == [{"n": 1}, {"n": 2}]
