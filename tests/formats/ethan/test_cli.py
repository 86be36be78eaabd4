"""`nodeloom run agent.yaml --inputs '{...}' --json` as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

NODELOOM = str(Path(sys.executable).parent / "nodeloom")

AGENT = """
    meta:
      name: answerer
      defaults: {llm: "openai:gpt-4o-mini"}
    state:
      shape: {question: str, answer: "str | null", log: list}
      init: {log: []}
    prompts:
      templates:
        answer: {user: "Answer: {{ state.question }}"}
    graph:
      inputs: [question]
      outputs: [answer]
      nodes:
        - id: respond
          type: llm
          prompt: answer
          map:
            set: {answer: "{{ result.text }}"}
            merge: {log: [answered]}
"""

SCRIPT = """
    rules:
      - match: {last_message: "Answer: why?"}
        reply: Because it is.
"""


def run(folder: Path, *args: str) -> tuple[int, list[dict]]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL",)}
    done = subprocess.run(
        [NODELOOM, "run", *args], capture_output=True, text=True, timeout=120, cwd=folder, env=env
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, lines


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_run_prints_the_final_state_and_outputs_in_its_result_line(tmp_path):
    agent = write(tmp_path, "agent.yaml", AGENT)
    script = write(tmp_path, "agent.mock.yaml", SCRIPT)
    code, lines = run(
        tmp_path,
        str(agent),
        "--inputs",
        '{"question": "why?"}',
        "--json",
        "--mock-llm",
        str(script),
    )
    result = lines[-1]
    assert code == 0, result
    assert result["type"] == "result" and result["status"] == "completed"
    assert result["state"] == {"question": "why?", "answer": "Because it is.", "log": ["answered"]}
    assert result["result"] == {"answer": "Because it is."}
    assert result["usage"]["total_tokens"] > 0
    assert {line["node_id"] for line in lines if line.get("event_type") == "started"} == {
        "__start__",
        "respond",
    }


def test_an_invalid_file_exits_2_with_located_errors(tmp_path):
    agent = write(tmp_path, "agent.yaml", AGENT.replace("prompt: answer", "prompt: anser"))
    code, lines = run(tmp_path, str(agent), "--inputs", '{"question": "why?"}', "--json")
    assert code == 2
    assert lines[-1]["status"] == "invalid"
    (error,) = lines[-1]["errors"]
    assert error["code"] == "unknown_reference"
    assert error["field"] == "graph.nodes[0].prompt"
    assert error["node_id"] == "respond"


def test_a_missing_input_is_invalid_input_exit_2_naming_the_input(tmp_path):
    agent = write(tmp_path, "agent.yaml", AGENT)
    code, lines = run(tmp_path, str(agent), "--inputs", "{}", "--json")
    assert code == 2
    assert lines[-1]["status"] == "invalid"
    (error,) = lines[-1]["errors"]
    assert error["code"] == "missing_input"
    assert error["field"] == "graph.inputs"
    assert "'question'" in error["message"]


def test_max_subgraph_depth_is_passed_to_the_loader(tmp_path):
    agent = write(
        tmp_path,
        "agent.yaml",
        """
        subgraphs:
          down:
            nodes:
              - {id: again, type: subgraph, graph: down}
        graph:
          nodes:
            - {id: enter, type: subgraph, graph: down}
        """,
    )
    code, lines = run(tmp_path, str(agent), "--json", "--max-subgraph-depth", "2")
    assert code == 1
    assert lines[-1]["error"]["code"] == "max_subgraph_depth"
    assert "past the limit of 2" in lines[-1]["error"]["message"]


def test_validate_and_convert_read_ethan_files(tmp_path):
    agent = write(tmp_path, "agent.yaml", AGENT)
    done = subprocess.run(
        [NODELOOM, "validate", str(agent)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "agent.json"
    done = subprocess.run(
        [NODELOOM, "convert", str(agent), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["nodes"][0]["type"] == "ethan-start"
