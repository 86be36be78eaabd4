"""`nodeloom mock-llm` as a real process: the URL line, serving, signals, exit codes."""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.e2e

COMMAND = "from nodeloom.testing.mock_llm.cli import mock_llm_command; mock_llm_command()"
SCRIPT = """\
rules:
  - match: {last_message: {contains: ping}}
    reply: pong
"""


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )


def first_line(process: subprocess.Popen[str], timeout: float = 20) -> str:
    """The first stdout line, or fail with stderr if none comes in time."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout).rstrip("\n")
    except queue.Empty:
        process.kill()
        pytest.fail(f"no URL line within {timeout}s; stderr: {process.communicate()[1]}")


@pytest.fixture
def script_file(tmp_path: Path) -> Path:
    path = tmp_path / "f.yaml"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


@pytest.fixture
def server(script_file: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = spawn("--script", str(script_file))
    try:
        yield process, first_line(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_it_prints_the_url_serves_the_script_and_exits_0_on_a_signal(server, signum):
    process, url = server

    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/v1")
    response = httpx.post(
        f"{url}/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "ping"}]},
        timeout=10,
    )
    assert response.json()["choices"][0]["message"]["content"] == "pong"
    recorded = httpx.get(f"{url}/_requests", timeout=10).json()
    assert [r["rule"] for r in recorded] == [0]

    process.send_signal(signum)
    _, stderr = process.communicate(timeout=20)

    assert process.returncode == 0
    assert "POST /v1/chat/completions model=m -> 200 (rule 0)" in stderr


def test_without_a_script_it_echoes():
    process = spawn("--quiet")
    try:
        url = first_line(process)
        response = httpx.post(
            f"{url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            timeout=10,
        )
        assert response.json()["choices"][0]["message"]["content"] == "mock reply to: hi"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    assert process.returncode == 0
    assert "POST" not in stderr


def test_an_invalid_script_exits_2_with_every_issue(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - match: {last_message: {contians: x}}\n", encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-c", COMMAND, "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert done.stdout == ""
    assert (
        "rules[0].match.last_message: unknown key 'contians'; did you mean 'contains'?"
        in done.stderr
    )


def test_a_port_in_use_exits_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        done = subprocess.run(
            [sys.executable, "-c", COMMAND, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1 port {port}" in done.stderr
