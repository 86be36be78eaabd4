"""Every Ethan example in examples/ethan/ runs offline with `nodeloom run`: its inputs
from `<name>.inputs.json`, its LLM replies from `<name>.mock.yaml`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "examples" / "ethan"
EXAMPLES = sorted(p for p in FOLDER.glob("*.yaml") if not p.name.endswith(".mock.yaml"))


def run(path: Path, inputs: dict | None = None) -> dict:
    inputs = inputs or json.loads(path.with_suffix(".inputs.json").read_text())
    command = [
        str(Path(sys.executable).parent / "nodeloom"),
        "run",
        str(path),
        "--json",
        "--inputs",
        json.dumps(inputs),
        "--mock-llm",
        str(path.with_suffix(".mock.yaml")),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_there_are_examples():
    assert {p.stem for p in EXAMPLES} >= {"triage", "refine"}


@pytest.mark.e2e
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_example_runs_to_completion(path):
    assert run(path)["status"] == "completed"


@pytest.mark.e2e
def test_triage_looks_the_order_up_and_answers_about_it():
    result = run(FOLDER / "triage.yaml")
    assert result["state"]["category"] == "billing"
    assert result["state"]["order"]["total"] == 49.9
    assert "A-1001" in result["result"]["reply"]
    assert result["state"]["audit"]["steps"] == ["classified", "looked up", "drafted", "tidied"]
    assert "order_id" not in result["state"]


@pytest.mark.e2e
def test_triage_still_answers_when_the_lookup_fails():
    result = run(FOLDER / "triage.yaml", {"message": "I was charged twice", "order_id": "Z-9"})
    assert result["state"]["audit"]["steps"] == ["classified", "drafted", "tidied"]
    assert result["state"]["order"] is None
    assert result["outputs"]["lookup.on_error"]["result"]["error"]["code"] == "tool_error"


@pytest.mark.e2e
def test_refine_redrafts_until_the_grade_passes_then_summarises():
    result = run(FOLDER / "refine.yaml")
    state = result["state"]
    assert state["attempts"] == 3 and state["score"] >= 0.8
    assert state["history"] == ["draft 1", "draft 2", "draft 3", "summarized"]
    assert state["summary"].startswith("Tide pools")
