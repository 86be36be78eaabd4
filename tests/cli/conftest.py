"""The `nodeloom` command run as a real process, and graph files written with the builders.

Every CLI test goes through the installed console script, exactly as a user types it:
no `CliRunner`, no in-process shortcuts. The environment is pinned (no colour, no
terminal width, no NODELOOM_NODES_PATH from the developer's shell) so output is the same
everywhere.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nodeloom.plugins.discovery import PATH_VARIABLE
from nodeloom.testing.builders import edge, graph, node

FIXTURE_PACKS = Path(__file__).parent.parent / "plugins" / "fixtures"


def nodeloom_executable() -> str:
    """The console script installed beside this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).parent / "nodeloom"
    if beside.is_file():
        return str(beside)
    found = shutil.which("nodeloom")
    if found is None:
        pytest.fail("the `nodeloom` console script is not installed; run `pip install -e .`")
    return found


def cli_environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env.pop(PATH_VARIABLE, None)
    env.update(NO_COLOR="1", PYTHONIOENCODING="utf-8", **extra)
    return env


@pytest.fixture
def fixture_packs() -> Path:
    """The fixture node packs of the plugin tests (tests/plugins/fixtures)."""
    return FIXTURE_PACKS


@pytest.fixture
def nodeloom() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `nodeloom ARGS...` to its end; returns the completed process (text output)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 60):
        return subprocess.run(
            [nodeloom_executable(), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            stdin=subprocess.DEVNULL,
            env=cli_environment(**(env or {})),
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def spawn() -> Callable[..., subprocess.Popen[str]]:
    """Start `nodeloom ARGS...` without waiting (for signals); use it in a `with` block."""

    def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [nodeloom_executable(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=cli_environment(**(env or {})),
        )

    return start


class Terminal:
    """`nodeloom ARGS...` with a pseudo-terminal as its stdin and stderr, so that it asks
    there; `transcript` holds what it wrote to the terminal so far."""

    def __init__(self, *args: str) -> None:
        leader, follower = pty.openpty()
        self.leader = leader
        self.transcript = ""
        self.process = subprocess.Popen(
            [nodeloom_executable(), *args],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            encoding="utf-8",
            env=cli_environment(),
        )
        os.close(follower)
        self.closed = False

    def read_until(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.transcript and time.monotonic() < deadline:
            self.transcript += os.read(self.leader, 4096).decode(errors="replace")
        assert text in self.transcript, self.transcript

    def type(self, line: str) -> None:
        os.write(self.leader, line.encode() + b"\n")

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        """Wait for the end: the exit code and what went to stdout."""
        out, _ = self.process.communicate(timeout=timeout)
        self.close()
        return self.process.returncode, out

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if not self.closed:
            os.close(self.leader)
            self.closed = True


@pytest.fixture
def terminal() -> Iterator[Callable[..., Terminal]]:
    """Start `nodeloom ARGS...` at a pseudo-terminal (see Terminal); killed if left running."""
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        started.append(Terminal(*args))
        return started[-1]

    yield start
    for each in started:
        each.close()


@pytest.fixture
def write_graph(tmp_path: Path) -> Callable[[str, dict[str, Any]], Path]:
    """Write a graph document to tmp_path/<name>.json; returns the path."""

    def write(name: str, document: dict[str, Any]) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
        return path

    return write


# --- graphs -------------------------------------------------------------------------------


def code(source: str) -> str:
    return "def main(input, nodes):\n" + "".join(f"    {line}\n" for line in source.splitlines())


@pytest.fixture
def greeting(write_graph) -> Path:
    """Chat Start -> Prompt Template named Greeting: outputs {"text": "Hello <message>"}."""
    return write_graph(
        "greeting",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node("greet", "prompt-template", name="Greeting", template="Hello {{ $json.message }}"),
            edge("start", "greet"),
        ),
    )


@pytest.fixture
def pipeline(write_graph) -> Path:
    """Chat Start -> first -> second, plus a side branch from Chat Start."""
    return write_graph(
        "pipeline",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node("first", "prompt-template", name="First", template="1:{{ $json.message }}"),
            node("second", "prompt-template", name="Second", template="2:{{ $json.text }}"),
            node("side", "prompt-template", name="Side", template="side"),
            edge("start", "first"),
            edge("first", "second"),
            edge("start", "side"),
        ),
    )


@pytest.fixture
def raising_code(write_graph) -> Path:
    return write_graph(
        "raising_code",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node("boom", "code", name="Boom", code=code('raise ValueError("boom on purpose")')),
            edge("start", "boom"),
        ),
    )


@pytest.fixture
def impossible_conversion(write_graph) -> Path:
    """Converts the message to an integer: fails for a message like "abc"."""
    return write_graph(
        "impossible_conversion",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node("convert", "type-converter", name="To Integer", to="integer", field="message"),
            edge("start", "convert"),
        ),
    )


@pytest.fixture
def sleeping_code(write_graph) -> Path:
    """A Code node that sleeps for 60 s: only a timeout or a cancellation ends it."""
    return write_graph(
        "sleeping_code",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node(
                "nap",
                "code",
                name="Long Nap",
                code="import time\n\n" + code("time.sleep(60)"),
                timeout=120,
            ),
            edge("start", "nap"),
        ),
    )


@pytest.fixture
def parallel_naps(write_graph) -> Path:
    """Two independent Code nodes after Chat Start, each sleeping 0.3 s."""
    nap = code("import time\ntime.sleep(0.3)\nreturn 1")
    return write_graph(
        "parallel_naps",
        graph(
            node("start", "chat-start"),
            node("a", "code", code=nap),
            node("b", "code", code=nap),
            edge("start", "a"),
            edge("start", "b"),
        ),
    )


@pytest.fixture
def branching(write_graph) -> Path:
    """A Conditional on message == "yes" with one Prompt Template per branch."""
    return write_graph(
        "branching",
        graph(
            node("start", "chat-start", name="Chat Start"),
            node("check", "conditional", name="Is Yes", field="message", value="yes"),
            node("yes", "prompt-template", name="Said Yes", template="yes!"),
            node("no", "prompt-template", name="Said No", template="no!"),
            edge("start", "check"),
            edge("check", "yes", "true"),
            edge("check", "no", "false"),
        ),
    )
