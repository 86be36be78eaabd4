"""`nodeloom run FILE`: events as JSON lines, a result line, and exit codes that say how the
run ended (0 completed, 1 failed, 2 invalid input, 4 cancelled)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodeloom.testing.builders import edge, graph, node

pytestmark = pytest.mark.e2e

EVENT_KEYS = {
    "type",
    "seq",
    "run_id",
    "event_type",
    "node_id",
    "node_name",
    "node_type",
    "data",
    "timestamp",
}
RESULT_KEYS = {"type", "run_id", "status", "outputs", "error"}
ERROR_KEYS = {"code", "node_id", "field", "message"}


def json_lines(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def started_names(lines):
    return [e["node_name"] for e in lines if e.get("event_type") == "started"]


def invalid(process):
    """The single invalid-result line of a `--json` run that exited 2."""
    assert process.returncode == 2, process.stderr
    [line] = json_lines(process.stdout)
    assert set(line) == {"type", "status", "errors"}
    assert (line["type"], line["status"]) == ("result", "invalid")
    for error in line["errors"]:
        assert set(error) >= ERROR_KEYS
    return line["errors"]


# --- the JSON protocol --------------------------------------------------------------------


def test_json_prints_one_object_per_event_then_a_result_line(nodeloom, greeting):
    process = nodeloom("run", str(greeting), "--input", "World", "--json")
    assert process.returncode == 0, process.stderr
    *events, result = json_lines(process.stdout)
    assert events, "no event lines before the result"
    for event in events:
        assert set(event) == EVENT_KEYS
        assert event["type"] == "event"
    assert set(result) >= RESULT_KEYS
    assert result["type"] == "result"


def test_json_event_sequence_numbers_are_contiguous_from_one_and_share_the_run_id(
    nodeloom, greeting
):
    *events, result = json_lines(nodeloom("run", str(greeting), "--json").stdout)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["run_id"] for e in events} == {result["run_id"]}
    assert events[0]["event_type"] == "run_started"
    assert events[-1]["event_type"] == "run_completed"


def test_json_node_events_name_the_node_by_id_name_and_type(nodeloom, greeting):
    *events, _ = json_lines(nodeloom("run", str(greeting), "--json").stdout)
    [started] = [e for e in events if e["event_type"] == "started" and e["node_id"] == "greet"]
    assert (started["node_name"], started["node_type"]) == ("Greeting", "prompt-template")
    [completed] = [e for e in events if e["event_type"] == "completed" and e["node_id"] == "greet"]
    assert completed["data"]["outputs"] == {"output": {"text": "Hello "}}


def test_the_result_line_holds_every_outputs_by_node_name_then_port(nodeloom, greeting):
    *_, result = json_lines(nodeloom("run", str(greeting), "--input", "World", "--json").stdout)
    assert result["status"] == "completed"
    assert result["error"] is None
    assert result["outputs"] == {
        "Chat Start": {"output": {"message": "World"}},
        "Greeting": {"output": {"text": "Hello World"}},
    }


# --- exit codes ---------------------------------------------------------------------------


def test_a_completed_run_exits_0(nodeloom, greeting):
    assert nodeloom("run", str(greeting), "--input", "hi").returncode == 0


def test_a_code_node_that_raises_fails_the_run_with_exit_1_and_the_users_error(
    nodeloom, raising_code
):
    process = nodeloom("run", str(raising_code), "--json")
    assert process.returncode == 1, process.stderr
    *events, result = json_lines(process.stdout)
    assert result["status"] == "failed"
    assert result["error"]["code"] == "code_error"
    assert result["error"]["node_name"] == "Boom"
    assert (
        result["error"]["message"]
        == "node 'Boom' (code, id 'boom') failed: ValueError: boom on purpose"
    )
    assert events[-1]["event_type"] == "run_failed"


def test_an_impossible_type_conversion_fails_the_run_with_exit_1(nodeloom, impossible_conversion):
    process = nodeloom("run", str(impossible_conversion), "--input", "abc", "--json")
    assert process.returncode == 1, process.stderr
    *_, result = json_lines(process.stdout)
    assert result["status"] == "failed"
    assert result["error"]["node_id"] == "convert"
    assert (
        "Cannot convert \"abc\" (string) (field 'message') to integer" in result["error"]["message"]
    )


def test_a_malformed_json_file_is_invalid_input_with_exit_2(nodeloom, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"nodes": [', encoding="utf-8")
    [error] = invalid(nodeloom("run", str(path), "--json"))
    assert error["code"] == "invalid_json"
    assert error["message"].startswith(f"{path} is not valid JSON: ")


def test_an_unknown_node_type_is_invalid_input_with_exit_2_located_on_the_node(
    nodeloom, write_graph
):
    path = write_graph("unknown", graph(node("start", "chat-start"), node("x", "prompt-templat")))
    [error] = invalid(nodeloom("run", str(path), "--json"))
    assert (error["code"], error["node_id"], error["field"]) == ("unknown_node_type", "x", "type")
    assert error["message"] == "unknown node type 'prompt-templat'; did you mean 'prompt-template'?"


def test_a_missing_file_is_invalid_input_with_exit_2(nodeloom, tmp_path):
    missing = tmp_path / "nowhere.json"
    [error] = invalid(nodeloom("run", str(missing), "--json"))
    assert error["code"] == "file_not_found"
    assert error["message"] == f"no such file: {missing}"


def test_a_file_that_is_a_directory_is_invalid_input_with_exit_2(nodeloom, tmp_path):
    [error] = invalid(nodeloom("run", str(tmp_path), "--json"))
    assert error["code"] == "file_unreadable"
    assert error["message"].startswith(f"cannot read {tmp_path}: ")


def test_a_run_longer_than_timeout_fails_with_exit_1_and_run_timeout(nodeloom, sleeping_code):
    started = time.monotonic()
    process = nodeloom("run", str(sleeping_code), "--timeout", "0.5", "--json")
    assert process.returncode == 1, process.stderr
    assert time.monotonic() - started < 30, "the 60 s Code node was not cancelled"
    *_, result = json_lines(process.stdout)
    assert result["status"] == "failed"
    assert result["error"] == {
        "code": "run_timeout",
        "message": "the run took longer than its timeout of 0.5 s; running nodes were cancelled",
    }


def test_sigint_cancels_a_running_run_with_exit_4_and_a_cancelled_result(spawn, sleeping_code):
    with spawn("run", str(sleeping_code), "--json") as process:
        seen = []
        for line in process.stdout:
            seen.append(json.loads(line))
            if seen[-1].get("event_type") == "started" and seen[-1]["node_id"] == "nap":
                break
        else:
            pytest.fail(f"the Code node never started: {seen} {process.stderr.read()}")
        process.send_signal(signal.SIGINT)
        try:
            rest, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail("SIGINT did not end the run within 30 s")
    assert process.returncode == 4
    *events, result = [*seen, *json_lines(rest)]
    assert events[-1]["event_type"] == "run_cancelled"
    assert result["type"] == "result"
    assert result["status"] == "cancelled"
    assert result["run_id"] == events[0]["run_id"]
    assert result["error"]["code"] == "cancelled"


# --- limits and incremental runs ----------------------------------------------------------


def test_max_steps_caps_node_executions_and_fails_the_run(nodeloom, pipeline):
    process = nodeloom("run", str(pipeline), "--max-steps", "2", "--json")
    assert process.returncode == 1, process.stderr
    *_, result = json_lines(process.stdout)
    assert result["error"]["code"] == "max_steps_exceeded"


def test_concurrency_1_runs_one_node_at_a_time(nodeloom, parallel_naps):
    process = nodeloom("run", str(parallel_naps), "--concurrency", "1", "--json")
    *events, result = json_lines(process.stdout)
    assert result["status"] == "completed"
    order = [
        (e["event_type"], e["node_id"])
        for e in events
        if e["node_id"] in ("a", "b") and e["event_type"] in ("started", "completed")
    ]
    first, second = order[0][1], order[2][1]
    assert order == [
        ("started", first),
        ("completed", first),
        ("started", second),
        ("completed", second),
    ]


def test_without_a_concurrency_cap_independent_nodes_overlap(nodeloom, parallel_naps):
    *events, _ = json_lines(nodeloom("run", str(parallel_naps), "--json").stdout)
    kinds = [e["event_type"] for e in events if e["node_id"] in ("a", "b")]
    assert kinds[:2] == ["started", "started"]


def test_target_runs_only_the_target_and_its_ancestors(nodeloom, pipeline):
    process = nodeloom("run", str(pipeline), "--input", "x", "--target", "First", "--json")
    assert process.returncode == 0, process.stderr
    *events, result = json_lines(process.stdout)
    assert started_names(events) == ["Chat Start", "First"]
    assert set(result["outputs"]) == {"Chat Start", "First"}


def test_from_with_outputs_runs_the_node_and_its_descendants_on_the_given_outputs(
    nodeloom, pipeline, tmp_path
):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"Chat Start": {"output": {"message": "m"}}}))
    process = nodeloom("run", str(pipeline), "--from", "First", "--outputs", str(outputs), "--json")
    assert process.returncode == 0, process.stderr
    *events, result = json_lines(process.stdout)
    assert started_names(events) == ["First", "Second"]
    assert result["outputs"] == {
        "First": {"output": {"text": "1:m"}},
        "Second": {"output": {"text": "2:1:m"}},
    }


def test_from_accepts_a_saved_result_line_as_the_outputs_file(nodeloom, pipeline, tmp_path):
    saved = json_lines(nodeloom("run", str(pipeline), "--input", "first run", "--json").stdout)[-1]
    outputs = tmp_path / "result.json"
    outputs.write_text(json.dumps(saved))
    process = nodeloom(
        "run", str(pipeline), "--from", "Second", "--outputs", str(outputs), "--json"
    )
    assert process.returncode == 0, process.stderr
    *events, result = json_lines(process.stdout)
    assert started_names(events) == ["Second"]
    assert result["outputs"] == {"Second": {"output": {"text": "2:1:first run"}}}


def test_from_without_outputs_is_invalid_input_with_exit_2(nodeloom, pipeline):
    [error] = invalid(nodeloom("run", str(pipeline), "--from", "First", "--json"))
    assert error == {
        "code": "invalid_request",
        "node_id": None,
        "field": None,
        "message": "--from and --outputs go together",
    }


def test_outputs_without_from_is_invalid_input_with_exit_2(nodeloom, pipeline, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text("{}")
    [error] = invalid(nodeloom("run", str(pipeline), "--outputs", str(outputs), "--json"))
    assert error["code"] == "invalid_request"


def test_from_with_an_outputs_file_that_is_not_json_is_invalid_input(nodeloom, pipeline, tmp_path):
    outputs = tmp_path / "outputs.txt"
    outputs.write_text("not json")
    [error] = invalid(
        nodeloom("run", str(pipeline), "--from", "First", "--outputs", str(outputs), "--json")
    )
    assert error["code"] == "invalid_outputs"
    assert error["message"].startswith(f"{outputs} is not valid JSON: ")


def test_from_with_outputs_missing_an_upstream_node_names_it(nodeloom, pipeline, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text("{}")
    [error] = invalid(
        nodeloom("run", str(pipeline), "--from", "First", "--outputs", str(outputs), "--json")
    )
    assert (error["code"], error["node_id"]) == ("missing_outputs", "start")
    assert error["message"] == (
        "running from 'First' needs the outputs of 'Chat Start'; add them to the outputs file "
        "(an empty object if it fired nothing)"
    )


def test_target_and_from_together_are_invalid_input(nodeloom, pipeline, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text("{}")
    args = ["--target", "Second", "--from", "First", "--outputs", str(outputs), "--json"]
    [error] = invalid(nodeloom("run", str(pipeline), *args))
    assert error["message"] == "give either a target or a from node, not both"


def test_a_target_that_is_not_in_the_graph_is_invalid_and_lists_the_nodes(nodeloom, pipeline):
    [error] = invalid(nodeloom("run", str(pipeline), "--target", "Nope", "--json"))
    assert error["code"] == "unknown_node"
    assert error["message"] == (
        "the target node 'Nope' is not in the graph; nodes: Chat Start, First, Second, Side"
    )


# --- human output -------------------------------------------------------------------------


def test_without_json_progress_goes_to_stderr_and_end_node_outputs_to_stdout(nodeloom, greeting):
    process = nodeloom("run", str(greeting), "--input", "World")
    assert process.returncode == 0, process.stderr
    assert process.stdout == 'Greeting.output: {"text": "Hello World"}\n'
    lines = process.stderr.splitlines()
    assert "▶ Chat Start (chat-start)" in lines
    assert "▶ Greeting (prompt-template)" in lines
    assert any(line.startswith("✓ Greeting ") for line in lines)
    assert any(line.startswith("Run completed in ") for line in lines)


def test_without_json_a_skipped_branch_is_shown_with_its_reason(nodeloom, branching):
    process = nodeloom("run", str(branching), "--input", "no")
    assert process.returncode == 0, process.stderr
    assert any(line.startswith("⊘ Said Yes skipped: ") for line in process.stderr.splitlines())
    assert process.stdout == 'Said No.output: {"text": "no!"}\n'


def test_without_json_a_failing_node_is_shown_with_its_error(nodeloom, raising_code):
    process = nodeloom("run", str(raising_code))
    assert process.returncode == 1
    lines = process.stderr.splitlines()
    assert "✗ Boom: ValueError: boom on purpose" in lines
    assert "node 'Boom' (code, id 'boom') failed: ValueError: boom on purpose" in lines
    assert process.stdout == ""


def test_without_json_an_invalid_graph_lists_its_problems_on_stderr(nodeloom, write_graph):
    path = write_graph("unknown", graph(node("x", "no-such-type")))
    process = nodeloom("run", str(path))
    assert process.returncode == 2
    assert process.stdout == ""
    heading, problem = process.stderr.splitlines()
    assert heading == "The graph is invalid (1 problem):"
    assert problem.startswith(
        "  • [unknown_node_type] node 'x', field 'type': unknown node type 'no-such-type'; "
    )


# --- third-party nodes --------------------------------------------------------------------


def test_run_uses_node_types_from_nodeloom_nodes_path(nodeloom, write_graph, fixture_packs):
    path = write_graph(
        "external",
        graph(
            node("start", "chat-start"),
            node("shout", "fixture-shout", name="Shout"),
            edge("start", "shout"),
        ),
    )
    env = {"NODELOOM_NODES_PATH": str(fixture_packs / "good_pack")}
    process = nodeloom("run", str(path), "--input", "hey", "--json", env=env)
    assert process.returncode == 0, process.stderr
    assert json_lines(process.stdout)[-1]["outputs"]["Shout"] == {"output": "HEY!"}


def test_a_node_whose_executor_fails_to_import_makes_the_graph_invalid_with_exit_2(
    nodeloom, write_graph, fixture_packs
):
    path = write_graph("faulty", graph(node("bad", "fixture-import-fails")))
    env = {"NODELOOM_NODES_PATH": str(fixture_packs / "executor_faults_pack")}
    [error] = invalid(nodeloom("run", str(path), "--json", env=env))
    assert error["code"] == "plugin_unavailable"
    assert "the executor of node type 'fixture-import-fails'" in error["message"]
    assert (
        "ModuleNotFoundError: No module named 'nodeloom_fixture_missing_dependency'"
        in error["message"]
    )


@pytest.mark.e2e
def test_json_output_stays_pure_json_when_a_model_call_fails(tmp_path):
    from nodeloom.testing.builders import chain, node

    flow = tmp_path / "llm.json"
    flow.write_text(json.dumps(chain(node("s", "chat-start"), node("l", "llm-completion"))))
    script = tmp_path / "fail.yaml"
    script.write_text("default:\n  error: {status: 500, message: boom}\n")
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "nodeloom"),
            "run",
            str(flow),
            "--input",
            "hi",
            "--json",
            "--mock-llm",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert all(line.startswith("{") for line in lines), lines
    assert json.loads(lines[-1])["status"] == "failed"
