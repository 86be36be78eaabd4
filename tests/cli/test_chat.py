"""`nodeloom chat`: one run per line typed, one chat_id for the conversation."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.testing.builders import chain, node

NODELOOM = str(Path(sys.executable).parent / "nodeloom")


@pytest.mark.e2e
def test_a_chat_remembers_earlier_turns_and_streams_each_answer(tmp_path):
    flow = tmp_path / "chat.json"
    flow.write_text(
        json.dumps(chain(node("start", "chat-start"), node("a", "agent", name="Buddy")))
    )
    script = tmp_path / "chat.mock.yaml"
    script.write_text(
        "rules:\n"
        "  - match: {any_message: 'My name is Ada', last_message: {contains: 'Who am I'}}\n"
        "    reply: You are Ada.\n"
        "default: {reply: Nice to meet you.}\n"
    )
    done = subprocess.run(
        [NODELOOM, "chat", str(flow), "--mock-llm", str(script)],
        input="My name is Ada\nWho am I?\n/exit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = [line for line in done.stdout.splitlines() if line and not line.startswith("chat ")]
    assert answers == ["Nice to meet you.", "You are Ada."]
    assert done.stderr.count("you> ") == 3


@pytest.mark.e2e
def test_chat_reports_an_invalid_graph_and_exits_2(tmp_path):
    flow = tmp_path / "bad.json"
    flow.write_text('{"nodes": [{"id": "x", "type": "nope"}]}')
    done = subprocess.run(
        [NODELOOM, "chat", str(flow)], input="", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "unknown node type 'nope'" in done.stderr
