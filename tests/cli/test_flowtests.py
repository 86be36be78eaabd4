"""`nodeloom test` as a user runs it: names, marks, the failed expectation with its diff,
the exit codes, JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from nodeloom.testing.builders import chain, node

FLOW = chain(
    node("start", "chat-start", name="Chat Start"),
    node(
        "reply",
        "llm-completion",
        name="Reply",
        model="openai:gpt-4o-mini",
        prompt="{{ $json.message }}",
    ),
)

PASSING = """
flow: reply.json
mock_llm:
  rules:
    - match: {last_message: ping}
      reply: pong
tests:
  - name: ping gets pong
    input: ping
    expect:
      outputs: {Reply: {output: {text: pong}}}
      fired: {Reply: [output]}
      ran: [Reply]
      events: [run_started, {type: completed, node: reply}, run_completed]
  - name: anything else is echoed by the zero-config mock
    input: hello
    mock_llm: []
    expect:
      outputs: {Reply: {output: {text: {$contains: "mock reply to: hello"}}}}
"""

FAILING = """
flow: reply.json
mock_llm: [{reply: pong}]
tests:
  - name: the reply is wrong
    input: ping
    expect:
      outputs: {Reply: {output: {text: pang}}}
      skipped: [Reply]
  - name: a node that does not exist
    input: ping
    expect:
      outputs: {Replies: {}}
  - name: an event that never happens
    input: ping
    expect:
      events: [{type: error, node: Reply}]
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "reply.json").write_text(json.dumps(FLOW), encoding="utf-8")
    return tmp_path


@pytest.mark.slow
def test_passing_tests_are_listed_with_a_check_mark_and_exit_0(nodeloom, folder):
    (folder / "reply.flowtest.yaml").write_text(PASSING, encoding="utf-8")
    done = nodeloom("test", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ ping gets pong" in done.stdout
    assert "✓ anything else is echoed by the zero-config mock" in done.stdout
    assert "2 passed in" in done.stdout


@pytest.mark.slow
def test_a_failed_expectation_is_shown_with_its_path_and_exits_1(nodeloom, folder):
    (folder / "reply.flowtest.yaml").write_text(FAILING, encoding="utf-8")
    junit = folder / "report.xml"
    done = nodeloom("test", str(folder / "reply.flowtest.yaml"), "--junit", str(junit))
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "✗ the reply is wrong" in out
    assert "outputs.Reply.output.text: expected 'pang', got 'pong'" in out
    assert "skipped: expected Reply to be skipped, but it ran" in out
    assert "outputs: the flow has no node named 'Replies' (its nodes: Chat Start, Reply)" in out
    assert "events[0]: no error Reply event; the run's events" in out
    assert "0 passed, 3 failed in" in out

    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "3"
    failure = suite.find("testcase[@name='the reply is wrong']/failure")
    assert failure is not None
    assert failure.get("message") == "outputs.Reply.output.text: expected 'pang', got 'pong'"


@pytest.mark.slow
def test_k_runs_only_the_tests_whose_name_contains_the_text(nodeloom, folder):
    (folder / "reply.flowtest.yaml").write_text(FAILING, encoding="utf-8")
    done = nodeloom("test", str(folder), "-k", "NEVER HAPPENS")
    assert "an event that never happens" in done.stdout
    assert "the reply is wrong" not in done.stdout
    assert done.returncode == 1


@pytest.mark.slow
def test_an_invalid_test_file_is_reported_and_exits_2(nodeloom, folder):
    (folder / "bad.flowtest.yaml").write_text("flow: reply.json\ntests: [{nme: x}]\n")
    (folder / "reply.flowtest.yaml").write_text(PASSING, encoding="utf-8")
    done = nodeloom("test", str(folder))
    assert done.returncode == 2, done.stdout
    assert "tests[0].name: Field required" in done.stdout
    assert "2 passed, 1 invalid file in" in done.stdout


def test_a_flow_that_does_not_load_is_an_error_of_the_test(nodeloom, folder):
    (folder / "reply.flowtest.yaml").write_text("flow: missing.json\ntests: [{name: t}]\n")
    done = nodeloom("test", str(folder))
    assert done.returncode == 1
    assert "✗ t" in done.stdout and "the flow missing.json does not load" in done.stdout


def test_no_test_files_exits_2(nodeloom, tmp_path):
    done = nodeloom("test", str(tmp_path))
    assert done.returncode == 2
    assert "no flow test files (*.flowtest.yaml)" in done.stdout
