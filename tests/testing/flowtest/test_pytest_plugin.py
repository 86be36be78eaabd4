"""The pytest plugin in a pytest run of its own: each test of a *.flowtest.yaml file is an
item, named after the test, passing or failing with the failed expectations."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from nodeloom.testing.builders import chain, node

PLUGIN = "nodeloom.testing.flowtest.pytest_plugin"

TESTS = """
flow: greet.json
tests:
  - name: it greets
    input: Ada
    expect:
      outputs: {Greet: {output: {text: "Hi Ada"}}}
  - name: it greets someone else
    input: Ada
    expect:
      outputs: {Greet: {output: {text: "Hi Bob"}}}
"""


@pytest.mark.slow
def test_each_flow_test_is_a_pytest_item_that_passes_or_fails_with_the_reason(tmp_path):
    flow = chain(
        node("start", "chat-start"),
        node("greet", "prompt-template", name="Greet", template="Hi {{ $json.message }}"),
    )
    (tmp_path / "greet.json").write_text(json.dumps(flow), encoding="utf-8")
    (tmp_path / "greet.flowtest.yaml").write_text(TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PLUGIN, "-v", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "greet.flowtest.yaml::it greets PASSED" in out
    assert "greet.flowtest.yaml::it greets someone else FAILED" in out
    assert "outputs.Greet.output.text: expected 'Hi Bob', got 'Hi Ada'" in out
    assert "1 failed, 1 passed" in out
