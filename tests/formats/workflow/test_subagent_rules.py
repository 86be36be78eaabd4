"""Every subagent rule of seed 002, one test each: the file is refused with a located issue
before anything runs, so no request reaches the model (the original found a broken tree
only when the parent agent was about to run, after earlier agents had spent tokens)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nodeloom
from nodeloom import GraphError

NODELOOM = str(Path(sys.executable).parent / "nodeloom")


def tree(wf, *parts, lead_tools=None):
    """start -> first (an agent that would spend tokens) -> lead, with extra `parts`."""
    return wf.doc(
        wf.start(initialInput="go"),
        wf.agent("first"),
        wf.agent("lead", tools=lead_tools if lead_tools is not None else {"subagents": True}),
        wf.link("start", "first"),
        wf.link("first", "lead"),
        *parts,
    )


def refused(document, mock_llm):
    with pytest.raises(GraphError) as caught:
        nodeloom.load(document)
    assert mock_llm.requests == [], "a model was called for an invalid workflow"
    return caught.value.issues


def one(issues, code):
    found = [i for i in issues if i.code == code]
    assert len(found) == 1, [str(i) for i in issues]
    return found[0]


def test_a_valid_tree_loads(wf, mock_llm):
    document = tree(
        wf,
        wf.agent("child", tools={"subagents": True}),
        wf.agent("grandchild"),
        wf.subagent("lead", "child"),
        wf.subagent("child", "grandchild", target_handle=None),
    )
    nodeloom.load(document)


def test_the_source_of_a_subagent_link_must_be_an_agent(wf, mock_llm):
    issues = refused(tree(wf, wf.agent("child"), wf.subagent("start", "child")), mock_llm)
    issue = one(issues, "subagent_source_not_agent")
    assert (issue.node_id, issue.edge_id) == ("start", "connections[2]")


def test_the_target_of_a_subagent_link_must_be_an_agent(wf, mock_llm):
    document = tree(wf, wf.approval("ok"), wf.subagent("lead", "ok"))
    issue = one(refused(document, mock_llm), "subagent_target_not_agent")
    assert (issue.node_id, issue.field) == ("ok", "target")


def test_the_parent_must_have_its_subagents_tool_on(wf, mock_llm):
    document = tree(wf, wf.agent("child"), wf.subagent("lead", "child"), lead_tools={})
    issue = one(refused(document, mock_llm), "subagents_disabled")
    assert (issue.node_id, issue.field) == ("lead", "data.tools.subagents")
    assert '"subagents": true' in issue.message


def test_a_subagent_link_enters_the_targets_input(wf, mock_llm):
    document = tree(wf, wf.agent("child"), wf.subagent("lead", "child", target_handle="tools"))
    issue = one(refused(document, mock_llm), "subagent_target_handle")
    assert (issue.node_id, issue.field) == ("child", "targetHandle")


def test_an_agent_is_not_its_own_subagent(wf, mock_llm):
    issue = one(refused(tree(wf, wf.subagent("lead", "lead")), mock_llm), "subagent_self_reference")
    assert issue.node_id == "lead"


def test_subagents_form_no_cycle(wf, mock_llm):
    document = tree(
        wf,
        wf.agent("a", tools={"subagents": True}),
        wf.agent("b", tools={"subagents": True}),
        wf.subagent("lead", "a"),
        wf.subagent("a", "b"),
        wf.subagent("b", "a"),
    )
    issue = one(refused(document, mock_llm), "subagent_cycle")
    assert "'a' -> 'b' -> 'a'" in issue.message
    assert issue.edge_id == "connections[4]"


def test_a_subagent_has_at_most_one_parent(wf, mock_llm):
    document = tree(
        wf,
        wf.agent("other", tools={"subagents": True}),
        wf.agent("child"),
        wf.link("first", "other"),
        wf.subagent("lead", "child"),
        wf.subagent("other", "child"),
    )
    issue = one(refused(document, mock_llm), "subagent_multiple_parents")
    assert (issue.node_id, issue.edge_id) == ("child", "connections[4]")
    assert "'lead', 'other'" in issue.message


@pytest.mark.parametrize("direction", ["into", "out of"])
def test_a_subagent_is_on_no_execution_edge(wf, mock_llm, direction):
    edge = wf.link("first", "child") if direction == "into" else wf.link("child", "first")
    document = tree(wf, wf.agent("child"), wf.subagent("lead", "child"), edge)
    issue = one(refused(document, mock_llm), "subagent_on_execution_edge")
    assert (issue.node_id, issue.edge_id) == ("child", "connections[3]")


def test_every_broken_rule_is_reported_at_once(wf, mock_llm):
    document = tree(
        wf,
        wf.agent("child"),
        wf.subagent("lead", "lead"),
        wf.subagent("start", "child", target_handle="x"),
    )
    codes = {i.code for i in refused(document, mock_llm)}
    assert codes == {
        "subagent_self_reference",
        "subagent_source_not_agent",
        "subagent_target_handle",
    }


@pytest.mark.e2e
def test_the_cli_refuses_an_invalid_tree_with_exit_2_and_calls_no_model(wf, mock_llm, tmp_path):
    path = tmp_path / "broken.workflow.json"
    path.write_text(json.dumps(tree(wf, wf.subagent("lead", "lead"))))
    done = subprocess.run(
        [NODELOOM, "run", str(path), "--json", "--input", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert [e["code"] for e in result["errors"]] == ["subagent_self_reference"]
    assert result["errors"][0]["node_id"] == "lead"
    assert mock_llm.requests == []
