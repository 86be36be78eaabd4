"""Bad workflow files: every problem is reported at once, located, before anything runs."""

import pytest

import nodeloom
from nodeloom import GraphError


def issues_of(document):
    with pytest.raises(GraphError) as caught:
        nodeloom.load(document)
    return caught.value.issues


def only(issues, code):
    found = [i for i in issues if i.code == code]
    assert found, f"no {code} in {[str(i) for i in issues]}"
    return found


def test_an_unknown_node_type_is_located_with_a_suggestion(wf, mock_llm):
    document = wf.doc(wf.start(), {**wf.agent("a"), "type": "agnet"}, wf.link("start", "a"))
    [issue] = only(issues_of(document), "unknown_node_type")
    assert (issue.node_id, issue.field) == ("a", "type")
    assert "did you mean 'agent'" in issue.message
    assert mock_llm.requests == []


def cond(**condition):
    return {"conditions": [condition]}


@pytest.mark.parametrize(
    "node_type, data, field, fragment",
    [
        ("start", {"initialInput": 3}, "data.initialInput", "must be text"),
        ("agent", {"model": ["gpt-5"]}, "data.model", "got a list"),
        ("agent", {"tools": ["web_search"]}, "data.tools", "an object"),
        ("agent", {"tools": {"web_search": "yes"}}, "data.tools.web_search", "true or false"),
        ("if", {"conditions": "yes"}, "data.conditions", "a list"),
        ("if", {"condition": 1}, "data.condition", "must be text"),
        ("if", cond(operator="startsWith"), "data.conditions[0].operator", "unknown operator"),
        ("if", cond(operator="equal", value=1), "data.conditions[0].value", "must be text"),
        ("if", {"conditions": ["yes"]}, "data.conditions[0]", "must be an object"),
        ("approval", {"prompt": {"text": "ok?"}}, "data.prompt", "must be text"),
    ],
)
def test_a_field_of_the_wrong_type_is_located(wf, node_type, data, field, fragment):
    bad = {"id": "n", "type": node_type, "x": 0, "y": 0, "data": data}
    document = (
        wf.doc(bad) if node_type == "start" else wf.doc(wf.start("s"), bad, wf.link("s", "n"))
    )
    issue = next(i for i in issues_of(document) if i.field == field)
    assert issue.code == "invalid_parameter" and issue.node_id == "n"
    assert fragment in issue.message


def test_an_unknown_data_field_is_refused_with_a_suggestion(wf):
    document = wf.doc(wf.start(), wf.agent("a", userPromt="hi"), wf.link("start", "a"))
    [issue] = only(issues_of(document), "unknown_parameter")
    assert (issue.node_id, issue.field) == ("a", "data.userPromt")
    assert "did you mean 'userPrompt'" in issue.message


def test_an_unknown_tool_is_refused(wf):
    document = wf.doc(wf.start(), wf.agent("a", tools={"websearch": True}), wf.link("start", "a"))
    [issue] = only(issues_of(document), "unknown_parameter")
    assert issue.field == "data.tools.websearch" and "web_search" in issue.message


def test_a_connection_to_a_missing_node_is_a_dangling_edge(wf, mock_llm):
    document = wf.doc(wf.start(), wf.agent("a"), wf.link("start", "a"), wf.link("a", "ghost"))
    [issue] = only(issues_of(document), "dangling_edge")
    assert (issue.edge_id, issue.field) == ("connections[1]", "target")
    assert "'ghost'" in issue.message
    assert mock_llm.requests == []


def test_a_connection_from_a_missing_node_is_a_dangling_edge_with_a_suggestion(wf):
    document = wf.doc(wf.start(), wf.agent("writer"), wf.link("writr", "writer"))
    [issue] = only(issues_of(document), "dangling_edge")
    assert issue.field == "source" and "did you mean 'writer'" in issue.message


@pytest.mark.parametrize(
    "source, handle, valid",
    [
        ("check", "condition-3", "condition-0, false"),
        ("check", None, "condition-0, false"),
        ("ok", "yes", "approve, reject"),
        ("a", "approve", "output"),
    ],
)
def test_an_unknown_output_handle_lists_the_valid_ones(wf, source, handle, valid):
    document = wf.doc(
        wf.start(),
        wf.agent("a"),
        wf.if_node("check", ("equal", "x")),
        wf.approval("ok"),
        wf.agent("b"),
        wf.link("start", "a"),
        wf.link("a", "check"),
        wf.link("check", "ok", "condition-0"),
        wf.link(source, "b", handle),
    )
    [issue] = only(issues_of(document), "unknown_handle")
    assert (issue.node_id, issue.edge_id, issue.field) == (source, "connections[3]", "sourceHandle")
    assert valid in issue.message


def test_an_unknown_input_handle_and_an_edge_into_start_are_refused(wf):
    document = wf.doc(
        wf.start(),
        wf.agent("a"),
        wf.link("start", "a", "output", "prompt"),
        wf.link("a", "start"),
    )
    issues = only(issues_of(document), "unknown_handle")
    assert [(i.edge_id, i.field) for i in issues] == [
        ("connections[0]", "targetHandle"),
        ("connections[1]", "target"),
    ]


def test_a_workflow_needs_a_start_node(wf):
    [issue] = only(issues_of(wf.doc(wf.agent("a"))), "start_node_missing")
    assert issue.field == "nodes"


def test_a_second_start_node_is_located(wf):
    document = wf.doc(wf.start("one"), wf.start("two"), wf.agent("a"), wf.link("one", "a"))
    [issue] = only(issues_of(document), "start_node_duplicate")
    assert issue.node_id == "two" and "'one'" in issue.message


S = {"id": "s", "type": "start"}


def workflow(nodes, connections=None, **top):
    return {"nodes": nodes, "connections": [] if connections is None else connections, **top}


@pytest.mark.parametrize(
    "document, code, where",
    [
        (workflow("start"), "invalid_graph", ("field", "nodes")),
        (workflow([], {}), "invalid_graph", ("field", "connections")),
        (workflow(["start"]), "invalid_graph", ("field", "nodes[0]")),
        (workflow([{"type": "start"}]), "invalid_graph", ("field", "nodes[0].id")),
        (workflow([{"id": "s"}]), "invalid_graph", ("node_id", "s")),
        (workflow([{**S, "x": "0", "y": 0}]), "invalid_graph", ("field", "x")),
        (workflow([{**S, "data": []}]), "invalid_graph", ("field", "data")),
        (workflow([S, {"id": "s", "type": "agent"}]), "duplicate_node_id", ("node_id", "s")),
        (workflow([S], [{"source": "s"}]), "invalid_graph", ("field", "target")),
        (
            workflow([S], [{"source": "s", "target": "s", "sourceHandle": 1}]),
            "invalid_graph",
            ("field", "sourceHandle"),
        ),
        (workflow([S], edges=[]), "invalid_graph", ("field", "edges")),
    ],
)
def test_a_malformed_file_is_located(document, code, where):
    issue = next(i for i in issues_of(document) if i.code == code)
    assert getattr(issue, where[0]) == where[1], issue


def test_every_problem_is_reported_at_once(wf):
    document = wf.doc(
        wf.start(),
        wf.agent("a", model=1),
        {**wf.agent("b"), "type": "bogus"},
        wf.link("start", "a"),
        wf.link("a", "ghost"),
    )
    codes = {i.code for i in issues_of(document)}
    assert codes == {"invalid_parameter", "unknown_node_type", "dangling_edge"}


def test_a_legacy_condition_beside_broken_conditions_is_not_reported_twice(wf):
    check = wf.if_node("check", conditions="yes", condition="fine")
    issues = issues_of(wf.doc(wf.start(), check, wf.link("start", "check")))
    assert [(i.code, i.field) for i in issues] == [("invalid_parameter", "data.conditions")]


def test_a_connection_without_a_handle_from_an_approval_says_which_are_valid(wf):
    document = wf.doc(
        wf.start(),
        wf.approval("ok"),
        wf.agent("a"),
        wf.link("start", "ok"),
        wf.link("ok", "a", None),
    )
    [issue] = only(issues_of(document), "unknown_handle")
    assert "no output handle (none given); its handles: approve, reject" in issue.message
