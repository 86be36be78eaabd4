"""`nodeloom runs`: the recorded runs of the run store, through the real command on the
per-test SQLite store (NODELOOM_DATA_DIR): list, show, events, resume, rerun, cancel,
prune; exit 2 for an unknown run or bad arguments, 1 for a failing store."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.store import Store
from nodeloom.testing.builders import edge, graph, node

pytestmark = pytest.mark.e2e


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def started(lines: list[dict]) -> list[str]:
    return [e["node_id"] for e in lines if e.get("event_type") == "started"]


@pytest.fixture
def approval(write_graph) -> Path:
    """Chat Start -> Approve (approval) -> send (on approve)."""
    return write_graph(
        "approval",
        graph(
            node("start", "chat-start"),
            node("ok", "approval", name="Approve", prompt="Send {{ $json.message }}?"),
            node("send", "prompt-template", template="sent {{ $json.message }}"),
            edge("start", "ok"),
            edge("ok", "send", "approve"),
        ),
    )


@pytest.fixture
def recorded(nodeloom):
    """Run FILE with `nodeloom run --json` and return (exit code, run id, its lines)."""

    def run(path: Path, *args: str) -> tuple[int, str, list[dict]]:
        done = nodeloom("run", str(path), "--json", *args)
        lines = json_lines(done.stdout)
        return done.returncode, lines[-1]["run_id"], lines

    return run


@pytest.fixture
def paused(recorded, approval) -> str:
    code, run_id, _ = recorded(approval, "--input", "hi")
    assert code == 3
    return run_id


# --- reading ------------------------------------------------------------------------------


def test_list_shows_a_completed_run_with_its_status_and_steps(nodeloom, recorded, greeting):
    _, run_id, _ = recorded(greeting, "--input", "World")
    [listed] = json_lines(nodeloom("runs", "list", "--json").stdout)
    assert (listed["id"], listed["status"], listed["steps"]) == (run_id, "completed", 2)
    table = nodeloom("runs", "list")
    assert table.returncode == 0, table.stderr
    [row] = [line for line in table.stdout.splitlines() if run_id in line]
    assert " completed " in row


def test_list_filters_by_status_newest_first_up_to_the_limit(
    nodeloom, recorded, greeting, impossible_conversion
):
    _, first, _ = recorded(greeting)
    _, failed, _ = recorded(impossible_conversion, "--input", "abc")
    _, last, _ = recorded(greeting)
    ids = [r["id"] for r in json_lines(nodeloom("runs", "list", "--json").stdout)]
    assert ids == [last, failed, first]
    only = nodeloom("runs", "list", "--json", "--status", "completed", "--limit", "1")
    assert [r["id"] for r in json_lines(only.stdout)] == [last]
    both = nodeloom("runs", "list", "--json", "--status", "failed", "--status", "paused")
    assert [r["id"] for r in json_lines(both.stdout)] == [failed]


def test_show_prints_the_header_and_each_node_execution_in_start_order(
    nodeloom, recorded, greeting
):
    _, run_id, _ = recorded(greeting, "--input", "World")
    shown = json.loads(nodeloom("runs", "show", run_id, "--json").stdout)
    assert shown["run"]["id"] == run_id and shown["run"]["status"] == "completed"
    assert shown["run"]["trigger"] == {"message": "World"}
    timeline = shown["timeline"]
    assert [(r["node_id"], r["status"]) for r in timeline] == [
        ("start", "completed"),
        ("greet", "completed"),
    ]
    assert timeline[1]["outputs"] == {"output": {"text": "Hello World"}}
    text = nodeloom("runs", "show", run_id)
    assert text.returncode == 0, text.stderr
    assert f"run {run_id}  completed" in text.stdout
    assert '{"message": "World"}' in text.stdout
    [greet] = [line for line in text.stdout.splitlines() if "Greeting (greet)" in line]
    assert " prompt-template " in greet and " completed " in greet


def test_events_prints_what_the_run_printed_and_starts_from_a_sequence_number(
    nodeloom, recorded, greeting
):
    _, run_id, lines = recorded(greeting, "--input", "World")
    events = json_lines(nodeloom("runs", "events", run_id, "--json").stdout)
    assert [(e["seq"], e["event_type"]) for e in events] == [
        (e["seq"], e["event_type"]) for e in lines[:-1]
    ]
    later = json_lines(nodeloom("runs", "events", run_id, "--json", "--from-seq", "3").stdout)
    assert [e["seq"] for e in later] == [e["seq"] for e in events if e["seq"] >= 3]
    text = nodeloom("runs", "events", run_id).stdout.splitlines()
    assert len(text) == len(events)
    assert "run_started" in text[0] and "run_completed" in text[-1]


def test_show_names_the_error_of_a_failed_run_and_of_its_node(
    nodeloom, recorded, impossible_conversion
):
    code, run_id, _ = recorded(impossible_conversion, "--input", "abc")
    assert code == 1
    shown = json.loads(nodeloom("runs", "show", run_id, "--json").stdout)
    assert shown["run"]["status"] == "failed"
    [convert] = [r for r in shown["timeline"] if r["node_id"] == "convert"]
    assert convert["status"] == "failed" and convert["error"]
    text = nodeloom("runs", "show", run_id).stdout
    assert "failed" in text
    assert shown["run"]["error"]["message"] in text
    [row] = [line for line in nodeloom("runs", "list").stdout.splitlines() if run_id in line]
    assert " failed " in row and "To Integer" in row


def test_a_running_run_whose_process_died_is_listed_as_interrupted(nodeloom, greeting):
    dead_pid = _dead_pid()
    run_id = _create_run(json.loads(greeting.read_text()), owner_pid=dead_pid)
    [listed] = json_lines(nodeloom("runs", "list", "--json").stdout)
    assert (listed["id"], listed["status"]) == (run_id, "interrupted")
    assert f"pid {dead_pid}" in listed["error"]["message"]


# --- resume and rerun ---------------------------------------------------------------------


def test_a_paused_run_resumed_with_respond_runs_the_downstream_node(nodeloom, paused):
    listed = json_lines(nodeloom("runs", "list", "--json", "--status", "paused").stdout)
    assert [r["id"] for r in listed] == [paused]
    done = nodeloom("runs", "resume", paused, "--respond", "Approve=yes", "--json")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    assert started(lines) == ["send"]
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["outputs"]["send"] == {"output": {"text": "sent hi"}}
    shown = json.loads(nodeloom("runs", "show", paused, "--json").stdout)
    assert shown["run"]["status"] == "completed"
    assert [r["node_id"] for r in shown["timeline"]] == ["start", "ok", "send"]


def test_show_of_a_paused_run_says_what_it_waits_for_and_how_to_answer(nodeloom, paused):
    text = nodeloom("runs", "show", paused).stdout
    assert "Approve waits for a decision: Send hi?" in text
    assert f"nodeloom runs resume {paused} --respond Approve=yes" in text
    shown = json.loads(nodeloom("runs", "show", paused, "--json").stdout)
    assert [(w["node_id"], w["prompt"]) for w in shown["waiting"]] == [("ok", "Send hi?")]


def test_resume_without_an_answer_pauses_again_with_exit_3_and_says_how_to_answer(nodeloom, paused):
    done = nodeloom("runs", "resume", paused)
    assert done.returncode == 3, done.stderr
    assert f"nodeloom runs resume {paused} --respond Approve=yes" in done.stderr
    assert nodeloom("runs", "list", "--json").stdout.count('"paused"') == 1


def test_resume_prints_progress_and_end_node_outputs_like_run(nodeloom, paused):
    done = nodeloom("runs", "resume", paused, "--respond", "ok=approved")
    assert done.returncode == 0, done.stderr
    assert 'send.output: {"text": "sent hi"}' in done.stdout.splitlines()
    assert "✓ send" in done.stderr


def test_resume_of_a_completed_run_exits_2_naming_its_status(nodeloom, recorded, greeting):
    _, run_id, _ = recorded(greeting)
    done = nodeloom("runs", "resume", run_id)
    assert done.returncode == 2
    assert f"run {run_id} is completed" in done.stderr
    assert "paused or interrupted" in done.stderr
    as_json = nodeloom("runs", "resume", run_id, "--json")
    [line] = json_lines(as_json.stdout)
    assert as_json.returncode == 2 and line["errors"][0]["code"] == "run_state"


def test_an_interrupted_run_resumes_from_its_record(nodeloom, greeting):
    run_id = _create_run(json.loads(greeting.read_text()), owner_pid=_dead_pid())
    done = nodeloom("runs", "resume", run_id, "--json")
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout)[-1]["outputs"]["Greeting"] == {"output": {"text": "Hello hi"}}


def test_rerun_from_a_node_runs_it_and_its_descendants_only(nodeloom, recorded, pipeline):
    _, original, _ = recorded(pipeline, "--input", "x")
    done = nodeloom("runs", "rerun", original, "--from", "Second", "--json")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    result = lines[-1]
    assert started(lines) == ["second"]
    assert result["outputs"]["Second"] == {"output": {"text": "2:1:x"}}
    assert result["run_id"] != original
    shown = json.loads(nodeloom("runs", "show", result["run_id"], "--json").stdout)
    assert (shown["run"]["rerun_of"], shown["run"]["rerun_from"]) == (original, "Second")
    text = nodeloom("runs", "show", result["run_id"]).stdout
    assert f"rerun of   {original} from Second" in text


def test_rerun_from_an_unknown_node_exits_2_listing_the_nodes(nodeloom, recorded, pipeline):
    _, original, _ = recorded(pipeline)
    done = nodeloom("runs", "rerun", original, "--from", "Nope")
    assert done.returncode == 2
    assert "'Nope'" in done.stderr and "First" in done.stderr


def test_rerun_needs_from(nodeloom, recorded, pipeline):
    _, original, _ = recorded(pipeline)
    done = nodeloom("runs", "rerun", original)
    assert done.returncode == 2 and "--from" in done.stderr


# --- cancel -------------------------------------------------------------------------------


def test_cancel_of_a_paused_run_ends_it_cancelled(nodeloom, paused):
    done = nodeloom("runs", "cancel", paused)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"run {paused} cancelled"
    [listed] = json_lines(nodeloom("runs", "list", "--json").stdout)
    assert listed["status"] == "cancelled"
    again = nodeloom("runs", "cancel", paused)
    assert again.returncode == 2
    assert (
        f"run {paused} is cancelled; only running, paused, interrupted or queued runs"
        in again.stderr
    )


def test_cancel_of_a_run_running_in_another_process_requests_it(nodeloom, greeting):
    run_id = _create_run(json.loads(greeting.read_text()), owner_pid=os.getpid())
    done = nodeloom("runs", "cancel", run_id, "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "running" and record["cancel_requested_at"]
    text = nodeloom("runs", "cancel", run_id).stdout
    assert text.startswith(f"cancel requested: run {run_id} runs in process {os.getpid()}")


# --- prune --------------------------------------------------------------------------------


def test_prune_older_than_0s_deletes_finished_runs_and_keeps_paused_ones(
    nodeloom, recorded, greeting, paused
):
    recorded(greeting)
    done = nodeloom("runs", "prune", "--older-than", "0s", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["runs"] == 1 and report["events"] > 0 and report["node_executions"] == 2
    assert [r["id"] for r in json_lines(nodeloom("runs", "list", "--json").stdout)] == [paused]
    text = nodeloom("runs", "prune", "--older-than", "30d")
    assert text.stdout.startswith("deleted 0 runs that ended more than 30d ago")


@pytest.mark.parametrize("age", ["30", "3y", "1.5d", "d", "-1d"])
def test_prune_refuses_an_age_it_cannot_read(nodeloom, age):
    done = nodeloom("runs", "prune", "--older-than", age)
    assert done.returncode == 2
    assert f"'{age}' is not an age" in done.stderr and "30d" in done.stderr


def test_prune_needs_older_than(nodeloom):
    done = nodeloom("runs", "prune")
    assert done.returncode == 2 and "--older-than" in done.stderr


# --- errors and the store -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["show"],
        ["events"],
        ["cancel"],
        ["resume"],
        ["rerun", "--from", "start"],
    ],
)
def test_an_unknown_run_id_exits_2_naming_it(nodeloom, command):
    done = nodeloom("runs", command[0], "no-such-run", *command[1:])
    assert done.returncode == 2
    assert "no run with id 'no-such-run'" in done.stderr
    as_json = nodeloom("runs", command[0], "no-such-run", *command[1:], "--json")
    [line] = json_lines(as_json.stdout)
    assert (as_json.returncode, line["status"]) == (2, "invalid")
    assert line["errors"][0]["code"] == "not_found"


def test_nodeloom_database_url_chooses_the_store(nodeloom, recorded, greeting, tmp_path):
    env = {"NODELOOM_DATABASE_URL": f"sqlite:///{tmp_path / 'elsewhere.db'}"}
    done = nodeloom("run", str(greeting), "--json", env=env)
    assert done.returncode == 0, done.stderr
    run_id = json_lines(done.stdout)[-1]["run_id"]
    listed = json_lines(nodeloom("runs", "list", "--json", env=env).stdout)
    assert [r["id"] for r in listed] == [run_id]
    assert json_lines(nodeloom("runs", "list", "--json").stdout) == []


def test_a_store_that_is_not_a_database_exits_1_with_its_error(nodeloom, tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(os.urandom(4096))
    done = nodeloom("runs", "list", env={"NODELOOM_DATABASE_URL": f"sqlite:///{broken}"})
    assert done.returncode == 1
    assert str(broken) in done.stderr


# --- helpers ------------------------------------------------------------------------------


def _dead_pid() -> int:
    """The pid of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _create_run(document: dict, *, owner_pid: int) -> str:
    """A `running` run of `document` in the test's store, owned by `owner_pid`, with no
    node on record (as if its process stopped before the first node)."""

    async def create() -> str:
        async with await Store.open() as store:
            record = await store.create_run(
                document=document, trigger={"message": "hi"}, owner_pid=owner_pid
            )
            return record.id

    return asyncio.run(create())


# --- at a terminal ------------------------------------------------------------------------


def test_resume_at_a_terminal_asks_for_the_waiting_node(terminal, paused):
    terminal = terminal("runs", "resume", paused)
    terminal.read_until("approve or reject?")
    terminal.type("yes")
    terminal.read_until("note (optional):")
    terminal.type("")
    code, out = terminal.finish()
    assert code == 0
    assert 'send.output: {"text": "sent hi"}' in out
    assert "Send hi?" in terminal.transcript


def test_ctrl_c_at_a_question_cancels_the_run_at_once(nodeloom, terminal, paused):
    terminal = terminal("runs", "resume", paused)
    terminal.read_until("approve or reject?")
    terminal.process.send_signal(signal.SIGINT)
    code, _ = terminal.finish()
    assert code == 4
    [listed] = json_lines(nodeloom("runs", "list", "--json").stdout)
    assert listed["status"] == "cancelled"
