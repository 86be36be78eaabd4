"""A run that stops early stops its running nodes at once: a Code sibling still sleeping
is cancelled, its process killed, and it reports no `completed`. Through the real
command: a failing branch (on_error stop), `runs cancel` from another process, the run's
`--timeout` and a node's `timeout`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from nodeloom.testing.builders import graph, node

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROMPTLY = 1.0  # seconds from the cause to the run's end event


def sleeper(pid_file: Path, side_effect: Path) -> dict:
    """A Code node that writes its pid, sleeps 6 s, then writes `side_effect`."""
    source = (
        "import os, time\n"
        "def main(input, nodes):\n"
        f"    with open({str(pid_file) + '.tmp'!r}, 'w') as f:\n"
        "        f.write(str(os.getpid()))\n"
        f"    os.replace({str(pid_file) + '.tmp'!r}, {str(pid_file)!r})\n"
        "    time.sleep(6)\n"
        f"    open({str(side_effect)!r}, 'w').write('done')\n"
        "    return 'slept'\n"
    )
    return node("sleeper", "code", name="Sleeper", code=source)


def after_sleeper_started(pid_file: Path, then: str, **data: object) -> dict:
    """A Code node that waits until the sleeper runs, then does `then`."""
    source = (
        "import os, time\n"
        "def main(input, nodes):\n"
        f"    while not os.path.exists({str(pid_file)!r}):\n"
        "        time.sleep(0.01)\n"
        f"    {then}\n"
    )
    return node("other", "code", name="Other", code=source, **data)


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def events(stdout: str) -> list[dict]:
    return [line for line in map(json.loads, stdout.splitlines()) if line["type"] == "event"]


def of_type(lines: list[dict], event_type: str, node_id: str | None = None) -> list[dict]:
    return [
        e
        for e in lines
        if e["event_type"] == event_type and (node_id is None or e["node_id"] == node_id)
    ]


def assert_sleeper_stopped(lines: list[dict], pid_file: Path, side_effect: Path) -> None:
    assert of_type(lines, "started", "sleeper")
    assert not of_type(lines, "completed", "sleeper"), "the cancelled sibling completed"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 1
    while is_running(pid):
        assert time.monotonic() < deadline, f"the sleeper's process {pid} still runs"
        time.sleep(0.01)
    assert not side_effect.exists()


def test_a_failing_branch_cancels_a_running_code_sibling_at_once(
    nodeloom, write_graph, tmp_path: Path
):
    pid_file, side_effect = tmp_path / "pid", tmp_path / "side-effect"
    path = write_graph(
        "fails",
        graph(
            sleeper(pid_file, side_effect),
            after_sleeper_started(pid_file, "raise ValueError('boom')"),
        ),
    )
    done = nodeloom("run", str(path), "--json")
    assert done.returncode == 1, done.stderr
    lines = events(done.stdout)
    [error] = of_type(lines, "error", "other")
    [failed] = of_type(lines, "run_failed")
    assert failed["timestamp"] - error["timestamp"] < PROMPTLY
    assert_sleeper_stopped(lines, pid_file, side_effect)


def test_a_node_timeout_cancels_a_running_code_sibling_at_once(
    nodeloom, write_graph, tmp_path: Path
):
    pid_file, side_effect = tmp_path / "pid", tmp_path / "side-effect"
    path = write_graph(
        "node-timeout",
        graph(
            sleeper(pid_file, side_effect),
            after_sleeper_started(pid_file, "time.sleep(30)", timeout=0.5),
        ),
    )
    done = nodeloom("run", str(path), "--json")
    assert done.returncode == 1, done.stderr
    lines = events(done.stdout)
    [error] = of_type(lines, "error", "other")
    assert "timeout" in error["data"]["error"]["code"]
    [failed] = of_type(lines, "run_failed")
    assert failed["timestamp"] - error["timestamp"] < PROMPTLY
    assert_sleeper_stopped(lines, pid_file, side_effect)


def test_the_run_timeout_cancels_a_running_code_node_at_once(nodeloom, write_graph, tmp_path: Path):
    pid_file, side_effect = tmp_path / "pid", tmp_path / "side-effect"
    path = write_graph("run-timeout", graph(sleeper(pid_file, side_effect)))
    done = nodeloom("run", str(path), "--json", "--timeout", "1.5")
    assert done.returncode == 1, done.stderr
    lines = events(done.stdout)
    [run_started] = of_type(lines, "run_started")
    [failed] = of_type(lines, "run_failed")
    assert failed["data"]["error"]["code"] == "run_timeout"
    assert failed["timestamp"] - run_started["timestamp"] < 1.5 + PROMPTLY
    assert_sleeper_stopped(lines, pid_file, side_effect)


def _read_lines(stream: Iterable[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def test_runs_cancel_from_another_process_cancels_a_running_code_node_within_a_second(
    nodeloom, spawn, write_graph, tmp_path: Path
):
    pid_file, side_effect = tmp_path / "pid", tmp_path / "side-effect"
    path = write_graph("cancelled", graph(sleeper(pid_file, side_effect)))
    running: subprocess.Popen[str] = spawn("run", str(path), "--json")
    # Every line is read through the one file object: `communicate()` after a
    # `readline()` reads the pipe itself and loses what readline had buffered (events).
    out_lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(running.stdout, out_lines))
    reader.start()
    try:
        run_id = json.loads(out_lines.get(timeout=30))["run_id"]
        deadline = time.monotonic() + 30
        while not pid_file.exists():
            assert time.monotonic() < deadline and running.poll() is None, "never started"
            time.sleep(0.01)
        cancel = nodeloom("runs", "cancel", run_id)
        assert cancel.returncode == 0, cancel.stderr
        asked = time.time()
        assert cancel.stdout.startswith(f"cancel requested: run {run_id}")
        running.wait(timeout=30)
        err = running.stderr.read()  # --json: a few lines at most, never a full pipe
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
        reader.join()
        running.stdout.close()
        running.stderr.close()
    lines = events("".join(out_lines.queue))
    [cancelled] = of_type(lines, "run_cancelled")
    assert cancelled["timestamp"] - asked < 0.5 + PROMPTLY, err
    assert_sleeper_stopped(lines, pid_file, side_effect)
    assert os.path.exists(pid_file)
