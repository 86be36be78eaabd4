"""Plan files and Python tool files written to tmp_path, loaded and run for real: the LLM is
the mock LLM served over HTTP (`mock_llm`), the tools are real functions in a real file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import nodeloom
from nodeloom.errors import GraphError, Issue
from nodeloom.formats import FormatOptions

TOOLS = '''
import json

CALLS = []


def get_a() -> dict:
    """Source A's figures."""
    CALLS.append("get_a")
    return {"source": "A", "value": 1}


def get_b() -> str:
    """Source B's figures."""
    return "B=2"


def lookup(term: str) -> str:
    """Look a term up.

    Args:
        term: The term to look up.
    """
    return f"definition of {term}"


async def slow_lookup(term: str) -> str:
    """Look a term up, asynchronously."""
    return f"async definition of {term}"


def add(a: int, b: int) -> str:
    """Add two integers (shadows the calculator's add)."""
    return f"{a} + {b} = {a + b} (from tools.py)"


def boom() -> str:
    """Always fails."""
    raise RuntimeError("boom on purpose")


def _helper():
    return "not a tool"
'''


def _step(name: str, thread: str = "main", prompt: str = "", **fields: Any) -> dict[str, Any]:
    """A plan node; `initial_tool_name` in `fields` makes it tool-first."""
    kind = "tool-first" if "initial_tool_name" in fields else "llm-first"
    return {
        "node_type": kind,
        "node_name": name,
        "thread_id": thread,
        "task_prompt": prompt,
        **fields,
    }


@pytest.fixture
def plan_file(tmp_path: Path) -> Callable[..., Path]:
    def write(document: dict[str, Any], name: str = "plan.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
        return path

    return write


@pytest.fixture
def tools_file(tmp_path: Path) -> Callable[..., Path]:
    """Write a Python tools file (default: TOOLS); returns its path."""

    def write(source: str = TOOLS, name: str = "tools.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return write


@pytest.fixture
def load_plan(plan_file) -> Callable[..., nodeloom.Flow]:
    def load(
        document: dict[str, Any],
        *,
        tools: Sequence[Path] = (),
        variables: dict[str, str] | None = None,
        pattern: str | None = None,
    ) -> nodeloom.Flow:
        path = plan_file(document)
        options = FormatOptions(
            variables=variables or {},
            pattern=pattern,
            tools=tuple(str(t) for t in tools),
            base_dir=path.parent,
        )
        return nodeloom.load(path, options=options)

    return load


@pytest.fixture
def run_plan(load_plan) -> Callable[..., Any]:
    """Load and run a plan; returns the RunResult."""

    async def run(
        document: dict[str, Any],
        message: str | None = None,
        *,
        sink: Any = None,
        **options: Any,
    ) -> nodeloom.RunResult:
        flow = load_plan(document, **options)
        async with flow:
            return await flow.run(message, sink=sink)

    return run


@pytest.fixture
def plan_issues(load_plan) -> Callable[..., list[Issue]]:
    """The issues loading a plan reports (fails the test if it loads)."""

    def issues(document: dict[str, Any], **options: Any) -> list[Issue]:
        with pytest.raises(GraphError) as raised:
            load_plan(document, **options)
        return raised.value.issues

    return issues


@pytest.fixture
def nodeloom_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed `nodeloom` console script to its end."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        executable = Path(sys.executable).parent / "nodeloom"
        return subprocess.run(
            [str(executable), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            stdin=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1", **(env or {})},
            timeout=60,
            check=False,
        )

    return run


def _thread_text(result: nodeloom.RunResult, thread: str) -> list[tuple[str, str]]:
    """(role, content) of each message of a thread in the run's result."""
    return [(m["role"], m["content"]) for m in result.result["threads"][thread]]


@pytest.fixture
def step() -> Callable[..., dict[str, Any]]:
    """step(name, thread="main", prompt="", **fields): a plan node (tool-first when
    `initial_tool_name` is given)."""
    return _step


@pytest.fixture
def thread_of() -> Callable[[nodeloom.RunResult, str], list[tuple[str, str]]]:
    """thread_of(result, thread): (role, content) of each message of a thread."""
    return _thread_text
