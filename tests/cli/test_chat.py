"""`nodeloom chat`: one run per line typed, one chat_id for the conversation."""

import json
import os
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


def user_tools_file(tmp_path: Path) -> Path:
    shop = tmp_path / "shop.py"
    shop.write_text(
        'def price(item: str) -> str:\n    """The price of an item."""\n'
        '    return f"{item} costs 3 euros"\n'
    )
    tools = {"shop": {"type": "toolset", "parameters": {"functions": [f"{shop}#price"]}}}
    path = tmp_path / "user-tools.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


def chat(tmp_path: Path, document: dict, *args: str, text: str) -> subprocess.CompletedProcess:
    flow = tmp_path / "chat.json"
    flow.write_text(json.dumps(document))
    script = tmp_path / "tools.mock.yaml"
    script.write_text(
        "rules:\n"
        "  - match: {tools: [price], tool_result: false}\n"
        "    tool_calls: [{name: price, arguments: {item: bread}}]\n"
        "  - match: {tool_result: price}\n"
        "    reply: 'Answer: {tool_result}'\n"
        "default: {reply: No tool.}\n"
    )
    env = {**os.environ, "NODELOOM_USER_TOOLS": str(user_tools_file(tmp_path))}
    return subprocess.run(
        [NODELOOM, "chat", str(flow), "--mock-llm", str(script), *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.e2e
def test_chat_with_a_tool_gives_it_to_the_root_agent_and_shows_the_flow_steps(tmp_path):
    document = chain(
        node("start", "chat-start", includeUserTools=True), node("a", "agent", name="Buddy")
    )
    done = chat(tmp_path, document, "--tool", "shop", text="bread?\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert "Answer: bread costs 3 euros" in done.stdout
    assert "✓ Buddy (agent) Answer: bread costs 3 euros" in done.stderr


@pytest.mark.e2e
def test_chat_refuses_a_tool_when_include_user_tools_is_off_or_unknown(tmp_path):
    document = chain(node("start", "chat-start"), node("a", "agent", name="Buddy"))
    off = chat(tmp_path, document, "--tool", "shop", text="bread?\n/exit\n")
    assert off.returncode == 2
    assert "user_tools_disabled" in off.stdout + off.stderr
    assert "includeUserTools" in off.stdout + off.stderr
    assert "Answer" not in off.stdout
    taking = chain(
        node("start", "chat-start", includeUserTools=True), node("a", "agent", name="Buddy")
    )
    unknown = chat(tmp_path, taking, "--tool", "nope", text="")
    assert unknown.returncode == 2
    assert "no user tool named 'nope'; the user tools file offers: shop" in unknown.stderr
