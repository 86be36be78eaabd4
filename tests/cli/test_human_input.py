"""Waiting nodes on the command line: --respond, paused results, terminal prompts."""

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodeloom.testing.builders import edge, graph, node

NODELOOM = str(Path(sys.executable).parent / "nodeloom")


@pytest.fixture
def flow_file(tmp_path):
    doc = graph(
        node("start", "chat-start"),
        node("ok", "approval", name="Approve", prompt="Send {{ $json.message }}?"),
        node("send", "prompt-template", template="sent {{ $json.message }}"),
        node("drop", "prompt-template", template="dropped: {{ $('Approve').item.json.note }}"),
        edge("start", "ok"),
        edge("ok", "send", "approve"),
        edge("ok", "drop", "reject"),
    )
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(doc))
    return path


def nodeloom(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NODELOOM, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


@pytest.mark.e2e
def test_a_json_run_without_an_answer_ends_paused_with_exit_3_and_the_waiting_nodes(flow_file):
    done = nodeloom("run", str(flow_file), "--input", "hi", "--json")
    assert done.returncode == 3
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "paused"
    assert result["waiting"] == [{"node_id": "ok", "node_name": "Approve", "kind": "approval"}]
    events = [json.loads(line)["event_type"] for line in done.stdout.splitlines()[:-1]]
    assert "waiting" in events and events[-1] == "run_paused"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "respond, branch",
    [
        ("Approve=yes", "send"),
        ("ok=approved", "send"),
        ('Approve={"decision": "reject", "note": "later"}', "drop"),
    ],
)
def test_respond_answers_ahead_of_time_by_node_name_or_id(flow_file, respond, branch):
    done = nodeloom("run", str(flow_file), "--input", "hi", "--json", "--respond", respond)
    assert done.returncode == 0, done.stdout
    outputs = json.loads(done.stdout.splitlines()[-1])["outputs"]
    assert branch in outputs and ({"send", "drop"} - {branch}).isdisjoint(outputs)


@pytest.mark.e2e
def test_an_answer_that_is_not_a_decision_is_invalid_input_before_any_node_runs(flow_file):
    done = nodeloom("run", str(flow_file), "--input", "hi", "--json", "--respond", "Approve=maybe")
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stdout.splitlines()  # no event: nothing ran
    [error] = json.loads(line)["errors"]
    assert error["code"] == "invalid_answer" and error["node_id"] == "ok"
    assert "'maybe' is not an approval decision" in error["message"]
    assert "approve (or approved, yes, y, ok) or reject (or rejected, no, n)" in error["message"]


@pytest.mark.e2e
def test_an_answer_to_no_node_exits_2_naming_the_nodes_that_wait(flow_file):
    done = nodeloom("run", str(flow_file), "--input", "hi", "--json", "--respond", "Aprove=yes")
    assert done.returncode == 2, done.stdout + done.stderr
    [error] = json.loads(done.stdout)["errors"]
    assert error["code"] == "unknown_node" and error["node_id"] == "Aprove"
    assert error["message"].endswith("the nodes that may wait for an answer: Approve")


@pytest.mark.e2e
def test_a_form_answer_of_the_wrong_shape_exits_2_listing_the_fields(tmp_path):
    path = tmp_path / "form.json"
    fields = [{"name": "age", "type": "number"}, {"name": "nick", "required": False}]
    path.write_text(json.dumps(graph(node("f", "human-input", name="Profile", fields=fields))))
    done = nodeloom("run", str(path), "--respond", 'Profile={"age": "old"}')
    assert done.returncode == 2, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "field 'age' must be a number" in output
    assert "it accepts an object {age: number, nick: string (optional)}" in output


@pytest.mark.e2e
def test_a_malformed_respond_is_invalid_input(flow_file):
    done = nodeloom("run", str(flow_file), "--json", "--respond", "no-equals-sign")
    assert done.returncode == 2
    assert json.loads(done.stdout)["errors"][0]["code"] == "invalid_request"


@pytest.mark.e2e
def test_an_interactive_run_asks_in_the_terminal_and_refuses_a_non_decision(flow_file):
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [NODELOOM, "run", str(flow_file), "--input", "hi"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    transcript = ""

    def read_until(text: str) -> None:
        nonlocal transcript
        deadline = time.monotonic() + 30
        while text not in transcript and time.monotonic() < deadline:
            transcript += os.read(leader, 4096).decode(errors="replace")
        assert text in transcript, transcript

    read_until("approve or reject?")
    os.write(leader, b"maybe\n")
    read_until("note (optional):")
    os.write(leader, b"\n")
    read_until("is not an approval decision")
    read_until("approve or reject?")
    os.write(leader, b"yes\n")
    read_until("note (optional):")
    os.write(leader, b"looks good\n")
    out, _ = process.communicate(timeout=30)
    os.close(leader)
    assert process.returncode == 0
    assert 'send.output: {"text": "sent hi"}' in out
    assert "Send hi?" in transcript
