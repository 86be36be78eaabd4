"""Several mock LLM scripts as one (`nodeloom serve --mock-llm A --mock-llm B`)."""

from __future__ import annotations

import httpx
import pytest

from nodeloom.testing.mock_llm import MockLLM, ScriptError
from nodeloom.testing.mock_llm.merge import merged_script


def ask(llm: MockLLM, text: str) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    answer = httpx.post(f"{llm.base_url}/chat/completions", json=body).json()
    return answer["choices"][0]["message"]["content"]


def test_rules_of_every_script_answer_in_order_and_no_scripts_default_answers_others(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "rules: [{match: {last_message: one}, reply: A}]\ndefault: {reply: a-default}\n"
    )
    (tmp_path / "b.yaml").write_text("rules: [{match: {last_message: o}, reply: B}]\n")
    llm = MockLLM(merged_script([tmp_path / "a.yaml", tmp_path / "b.yaml"])).start_in_thread()
    try:
        assert ask(llm, "one") == "A"
        assert ask(llm, "two") == "B"
        assert ask(llm, "hi") == "mock reply to: hi"  # zero-config, not a's default
    finally:
        llm.stop()


def test_one_script_keeps_its_default(tmp_path):
    (tmp_path / "a.yaml").write_text("rules: []\ndefault: {reply: fallback}\n")
    assert merged_script([tmp_path / "a.yaml"]).default.reply == "fallback"


def test_an_invalid_script_is_named(tmp_path):
    (tmp_path / "bad.yaml").write_text("rules: [{match: {nope: 1}}]\n")
    with pytest.raises(ScriptError, match=r"bad\.yaml"):
        merged_script([tmp_path / "bad.yaml"])
