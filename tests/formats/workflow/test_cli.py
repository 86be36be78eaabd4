"""Workflows on the command line, through the installed `nodeloom` script: run (exit codes
0 completed, 1 failed, 2 invalid, 3 paused), convert and validate."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.formats.workflow import logs

NODELOOM = str(Path(sys.executable).parent / "nodeloom")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "workflow"

pytestmark = pytest.mark.e2e


def nodeloom(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NODELOOM, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def lines(done: subprocess.CompletedProcess[str]) -> tuple[list[dict], dict]:
    """The event lines and the result line. Agno logs a failed model call to stdout when
    stdout is not a terminal ("ERROR   API status error ..."); such lines are skipped
    (reported: the CLI should send Agno's log to stderr)."""
    parsed = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return parsed[:-1], parsed[-1]


def example(name: str) -> tuple[Path, Path]:
    return EXAMPLES / f"{name}.workflow.json", EXAMPLES / f"{name}.mock.yaml"


def test_a_workflow_runs_to_completion_with_an_answer_given_ahead(tmp_path):
    flow, script = example("review")
    done = nodeloom("run", flow, "--json", "--mock-llm", script, "--respond", "review=yes")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events, result = lines(done)
    assert result["status"] == "completed"
    assert result["outputs"]["Publisher"]["output"].startswith("## What's new in 4.2")
    kinds = [(e["nodeId"], e["type"]) for e in logs(events)]
    assert ("review", "wait_input") in kinds and ("review", "input_received") in kinds
    assert ("writer", "subagent_call_end") in kinds


def test_no_is_a_rejection_on_the_command_line():
    flow, script = example("review")
    done = nodeloom("run", flow, "--json", "--mock-llm", script, "--respond", "review=no")
    assert done.returncode == 0
    _, result = lines(done)
    assert "Reviser" in result["outputs"] and "Publisher" not in result["outputs"]


def test_a_run_without_an_answer_ends_paused_with_exit_3():
    flow, script = example("review")
    done = nodeloom("run", flow, "--json", "--mock-llm", script)
    assert done.returncode == 3
    _, result = lines(done)
    assert result["status"] == "paused"
    assert result["waiting"] == [{"node_id": "review", "node_name": "review", "kind": "approval"}]


@pytest.mark.slow
def test_an_approval_answered_from_another_process_logs_wait_input_then_input_received(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("NODELOOM_DATA_DIR", str(tmp_path))
    flow, script = example("review")
    paused = nodeloom("run", flow, "--json", "--mock-llm", script)
    assert paused.returncode == 3
    events, result = lines(paused)
    kinds = [(e["nodeId"], e["type"]) for e in logs(events) if e["nodeId"] == "review"]
    assert kinds == [("review", "step_start"), ("review", "wait_input")]

    answer = '{"decision": "reject", "note": "too long"}'
    resumed = nodeloom(
        "runs",
        "resume",
        result["run_id"],
        "--respond",
        f"review={answer}",
        "--json",
        "--mock-llm",
        script,
    )
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    recorded = nodeloom("runs", "events", result["run_id"], "--json")
    entries = [
        (e["type"], e["content"])
        for e in logs(json.loads(line) for line in recorded.stdout.splitlines())
        if e["nodeId"] == "review"
    ]
    assert entries == [
        ("step_start", "approval node"),
        ("wait_input", "Waiting for user approval"),
        ("input_received", "User rejected this step. Feedback: too long"),
    ]


def test_a_failing_model_fails_the_run_with_exit_1(tmp_path):
    flow, _ = example("triage")
    script = tmp_path / "down.yaml"
    script.write_text("rules:\n  - error: {status: 400, message: provider down}\n")
    done = nodeloom("run", flow, "--json", "--input", "hi", "--mock-llm", script)
    assert done.returncode == 1
    _, result = lines(done)
    assert result["status"] == "failed" and result["error"]["code"] == "agent_error"


def test_an_invalid_workflow_exits_2_with_located_errors(tmp_path):
    path = tmp_path / "bad.workflow.json"
    path.write_text(
        json.dumps(
            {
                "nodes": [{"id": "s", "type": "start", "x": 0, "y": 0, "data": {}}],
                "connections": [{"source": "s", "target": "nowhere"}],
            }
        )
    )
    for command in (("run", path, "--json"), ("validate", path, "--json")):
        done = nodeloom(*command)
        assert done.returncode == 2, command
        result = json.loads(done.stdout.splitlines()[-1])
        assert result["errors"] == [
            {
                "code": "dangling_edge",
                "node_id": None,
                "field": "target",
                "edge_id": "connections[0]",
                "message": "the connection's target 'nowhere' is not a node of this workflow",
            }
        ]


def test_convert_writes_a_native_graph_that_validates_and_runs(tmp_path):
    flow, script = example("review")
    converted = tmp_path / "review.json"
    done = nodeloom("convert", flow, "-o", converted)
    assert done.returncode == 0, done.stderr
    graph = json.loads(converted.read_text())
    assert graph["format"] == "nodeloom" and graph["limits"] == {"max_steps": 1000}
    assert nodeloom("validate", converted).returncode == 0
    done = nodeloom("run", converted, "--json", "--mock-llm", script, "--respond", "review=yes")
    assert done.returncode == 0
    assert lines(done)[1]["outputs"]["Publisher"]["output"].startswith("## What's new")


@pytest.mark.parametrize(
    "name, args, ends",
    [
        ("triage", ["--input", "I was charged twice"], {"Billing", "Acknowledger"}),
        ("triage", ["--input", "The app crashes"], {"Bugs", "Acknowledger"}),
        ("refine", ["--respond", "sign_off=yes"], {"sign_off"}),
    ],
)
def test_the_examples_run_offline_with_their_scripts(name, args, ends):
    flow, script = example(name)
    done = nodeloom("run", flow, "--json", "--mock-llm", script, *args)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    _, result = lines(done)
    assert ends <= set(result["outputs"])
