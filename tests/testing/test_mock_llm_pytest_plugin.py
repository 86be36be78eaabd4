"""The pytest plugin in a pytest run of its own: the guard, its marker, its ini switch,
and the mock_llm fixture in sync and async tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = "nodeloom.testing.mock_llm.pytest_plugin"

TESTS = """
import os

import openai
import pytest


def test_the_guard_points_providers_at_a_closed_port():
    assert os.environ["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert os.environ["OLLAMA_HOST"] == "http://127.0.0.1:9"
    assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert os.environ["OPENAI_API_KEY"] == os.environ["ANTHROPIC_API_KEY"] != "sk-real"


def test_a_real_provider_call_fails_with_the_guards_explanation():
    openai.OpenAI(max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )


@pytest.mark.real_llm
def test_a_real_llm_test_keeps_its_environment():
    assert os.environ["OPENAI_API_KEY"] == "sk-real"
    assert os.environ["OPENAI_BASE_URL"] == "http://127.0.0.1:1/v1"


def test_the_fixture_serves_sync_tests_and_sets_openai_base_url(mock_llm):
    reply = openai.OpenAI(max_retries=0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "sync"}]
    )
    assert reply.choices[0].message.content == "mock reply to: sync"
    assert mock_llm.requests[0].last_message == "sync"


async def test_the_fixture_serves_async_tests(mock_llm):
    mock_llm.script([{"reply": "scripted"}])
    async with openai.AsyncOpenAI(base_url=mock_llm.base_url, max_retries=0) as client:
        reply = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "async"}]
        )
    assert reply.choices[0].message.content == "scripted"
"""


def run_pytest(folder: Path, *ini_lines: str, select: str = "") -> subprocess.CompletedProcess[str]:
    (folder / "pytest.ini").write_text(
        "\n".join(
            [
                "[pytest]",
                "addopts = --strict-markers -p no:cacheprovider",
                "asyncio_mode = auto",
                "asyncio_default_fixture_loop_scope = function",
                "filterwarnings = error",
                *ini_lines,
            ]
        ),
        encoding="utf-8",
    )
    (folder / "test_guarded.py").write_text(TESTS, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # The "real" settings point at loopback too: nothing here may leave the machine.
    environment.update(
        OPENAI_API_KEY="sk-real", OPENAI_BASE_URL="http://127.0.0.1:1/v1", AGNO_TELEMETRY="false"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PLUGIN, "-rA", "-k", select, str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )


@pytest.mark.slow
def test_the_plugin_guards_every_test_but_real_llm_ones(tmp_path: Path):
    done = run_pytest(tmp_path)

    assert "1 failed, 4 passed" in done.stdout, done.stdout + done.stderr
    assert "FAILED test_guarded.py::test_a_real_provider_call_fails_with_the_guards" in done.stdout
    assert "- no_real_llm -" in done.stdout
    assert "This test reached for a real LLM provider" in done.stdout


@pytest.mark.slow
def test_the_ini_switch_turns_the_guard_off(tmp_path: Path):
    done = run_pytest(tmp_path, "no_real_llm = false", select="not real_provider_call")

    # Unguarded, the first test sees the real settings, as the real_llm one does.
    assert "FAILED test_guarded.py::test_the_guard_points_providers_at_a_closed_port" in (
        done.stdout
    ), done.stdout + done.stderr
    assert "PASSED test_guarded.py::test_a_real_llm_test_keeps_its_environment" in done.stdout
