"""Structural rules of phase 1, reported at load time before any token is spent."""

import pytest

import nodeloom
from nodeloom.testing.builders import edge, graph, node


def issues(document):
    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(document)
    return caught.value.issues


def test_sub_agents_forming_a_cycle_are_reported_with_the_path():
    doc = graph(
        node("a", "agent"),
        node("b", "agent"),
        edge("a", "b", "agent", "tools"),
        edge("b", "a", "agent", "tools"),
    )
    [issue] = [i for i in issues(doc) if i.code == "cycle"]
    assert "'a' -> 'b' -> 'a'" in issue.message or "'b' -> 'a' -> 'b'" in issue.message


def test_a_sub_agent_with_two_parents_is_an_error():
    doc = graph(
        node("p1", "agent"),
        node("p2", "agent"),
        node("sub", "agent", name="Sub"),
        edge("sub", "p1", "agent", "tools"),
        edge("sub", "p2", "agent", "tools"),
    )
    [issue] = issues(doc)
    assert issue.code == "multiple_parents" and issue.node_id == "sub"
    assert "'p1'" in issue.message and "'p2'" in issue.message


def test_a_sub_agent_that_also_sits_on_the_spine_is_an_error():
    doc = graph(
        node("start", "chat-start"),
        node("lead", "agent"),
        node("sub", "agent"),
        edge("start", "sub"),
        edge("sub", "lead", "agent", "tools"),
    )
    [issue] = issues(doc)
    assert issue.code == "structural_on_spine" and issue.node_id == "sub"


def test_a_tools_wire_from_a_node_that_provides_no_tools_is_refused():
    doc = graph(
        node("start", "chat-start"), node("a", "agent"), edge("start", "a", "output", "tools")
    )
    [issue] = issues(doc)
    assert issue.code == "incompatible_socket"
    assert "'data' socket cannot connect to a 'tools' socket" in issue.message


def test_a_sub_agent_parameter_wired_from_a_flow_only_node_is_an_error():
    doc = graph(
        node("start", "chat-start"),
        node("lead", "agent"),
        node("sub", "agent"),
        node("t", "prompt-template", template="x"),
        edge("start", "lead"),
        edge("start", "t"),
        edge("sub", "lead", "agent", "tools"),
        edge("t", "sub", "output", "instructions"),
    )
    [issue] = issues(doc)
    assert issue.code == "structural_wire" and issue.field == "instructions"


def test_a_model_selector_may_feed_a_sub_agent():
    doc = graph(
        node("start", "chat-start"),
        node("lead", "agent"),
        node("sub", "agent"),
        node("m", "model-selector"),
        edge("start", "lead"),
        edge("sub", "lead", "agent", "tools"),
        edge("m", "sub", "model", "model"),
    )
    flow = nodeloom.load(doc)
    assert [n.id for n in flow.plan.nodes] == ["start", "lead", "m"]
