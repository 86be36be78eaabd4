"""The mock LLM's script: loading, located errors, and what each match condition means."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from nodeloom.testing.mock_llm import Rule, Script, ScriptError, load_script
from nodeloom.testing.mock_llm.request import ChatRequest
from nodeloom.testing.mock_llm.script import Match


def request(*messages: dict[str, Any], **body: Any) -> ChatRequest:
    return ChatRequest.from_body({"model": "gpt-4o-mini", "messages": list(messages), **body})


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool_turn(name: str, result: str) -> list[dict[str, Any]]:
    call = {"id": f"id-{name}", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"id-{name}", "content": result},
    ]


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


SYSTEM = {"role": "system", "content": "You are a pirate."}
SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}}

# (match, a request it fits, a request it does not fit)
CONDITIONS = {
    "last_message equals": (
        {"last_message": {"equals": "hi"}},
        request(user("hi")),
        request(user("hi!")),
    ),
    "last_message contains": (
        {"last_message": {"contains": "weather"}},
        request(user("the weather?")),
        request(user("Weather?")),
    ),
    "last_message as a plain string means contains": (
        {"last_message": "weather"},
        request(user("the weather?")),
        request(user("rain?")),
    ),
    "last_message regex": (
        {"last_message": {"regex": r"^\d+$"}},
        request(user("42")),
        request(user("4 2")),
    ),
    "last_message role": (
        {"last_message": {"role": "tool"}},
        request(user("q"), *tool_turn("f", "1")),
        request(user("q")),
    ),
    "last_message reads text parts": (
        {"last_message": {"contains": "cat"}},
        request({"role": "user", "content": [{"type": "text", "text": "a cat"}]}),
        request({"role": "user", "content": [{"type": "image_url", "image_url": {}}]}),
    ),
    "any_message": (
        {"any_message": {"contains": "secret"}},
        request(user("the secret"), *tool_turn("f", "1")),
        request(user("nothing")),
    ),
    "system": (
        {"system": "pirate"},
        request(SYSTEM, user("hi")),
        request(user("pirate")),
    ),
    "system reads developer messages too": (
        {"system": "pirate"},
        request({"role": "developer", "content": "be a pirate"}, user("hi")),
        request(user("hi")),
    ),
    "tools must all be offered": (
        {"tools": ["a", "b"]},
        request(user("x"), tools=[tool("b"), tool("a"), tool("c")]),
        request(user("x"), tools=[tool("a")]),
    ),
    "tool_result true": (
        {"tool_result": True},
        request(user("q"), *tool_turn("f", "1")),
        request(user("q")),
    ),
    "tool_result false": (
        {"tool_result": False},
        request(user("q")),
        request(user("q"), *tool_turn("f", "1")),
    ),
    "tool_result names the tool": (
        {"tool_result": "search"},
        request(user("q"), *tool_turn("search", "found")),
        request(user("q"), *tool_turn("fetch", "page")),
    ),
    "model": (
        {"model": "gpt-4o-mini"},
        request(user("x")),
        ChatRequest.from_body({"model": "o3", "messages": [user("x")]}),
    ),
    "json_schema true": (
        {"json_schema": True},
        request(user("x"), response_format=SCHEMA_FORMAT),
        request(user("x"), response_format={"type": "json_object"}),
    ),
    "json_schema false": (
        {"json_schema": False},
        request(user("x")),
        request(user("x"), response_format=SCHEMA_FORMAT),
    ),
    "every condition must hold": (
        {"last_message": "hi", "model": "gpt-4o-mini"},
        request(user("hi")),
        ChatRequest.from_body({"model": "o3", "messages": [user("hi")]}),
    ),
}


@pytest.mark.parametrize(("match", "fits", "misses"), CONDITIONS.values(), ids=CONDITIONS.keys())
def test_a_match_condition_fits_exactly_the_requests_it_describes(match, fits, misses):
    condition = Match.model_validate(match)

    assert condition.fits(fits)
    assert not condition.fits(misses)


def test_an_empty_match_fits_every_request():
    assert Match().fits(request(user("anything")))


def test_a_tool_name_matches_any_of_several_parallel_results():
    calls = [
        {"id": "1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]
    parallel = request(
        user("q"),
        {"role": "assistant", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "1", "content": "A"},
        {"role": "tool", "tool_call_id": "2", "content": "B"},
    )

    assert Match(tool_result="a").fits(parallel)
    assert Match(tool_result="b").fits(parallel)
    assert parallel.trailing_tool_results() == [("a", "A"), ("b", "B")]


def test_choose_skips_rules_whose_times_are_used_up():
    script = load_script([{"reply": "once", "times": 1}, {"reply": "always"}])
    hi = request(user("hi"))

    assert script.choose(hi, {}) == 0
    assert script.choose(hi, {0: 1}) == 1
    assert load_script([{"match": {"model": "o3"}}]).choose(hi, {}) is None


# --- loading ------------------------------------------------------------------------------

YAML_SCRIPT = """\
api_key: sk-test
rules:
  - match:
      last_message: {contains: weather}
      tools: [get_weather]
    tool_calls:
      - name: get_weather
        arguments: {city: Paris}
  - match: {tool_result: get_weather}
    reply: "It is {tool_result} in Paris."
    times: 1
  - match: {json_schema: true}
    json: {name: Ada, age: 36}
  - match: {last_message: {regex: "^fail"}}
    error: {status: 429, message: Slow down}
default:
  reply: I don't know.
  delay: 0.1
"""


def test_a_yaml_file_loads_into_a_script(tmp_path: Path):
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT, encoding="utf-8")

    script = load_script(path)

    assert script.api_key == "sk-test"
    assert len(script.rules) == 4
    assert script.rules[0].tool_calls is not None
    assert script.rules[0].tool_calls[0].arguments == {"city": "Paris"}
    assert script.rules[1].times == 1
    assert script.rules[2].json_ == {"name": "Ada", "age": 36}
    assert script.rules[3].error is not None
    assert script.rules[3].error.status == 429
    assert script.default.reply == "I don't know."
    assert load_script(str(path)) == script


def test_a_json_file_loads_the_same_way(tmp_path: Path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rules": [{"reply": "hi"}]}), encoding="utf-8")

    assert load_script(path).rules[0].reply == "hi"


def test_a_list_of_rules_is_a_script_and_an_empty_file_is_the_echo(tmp_path: Path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")

    assert load_script([{"reply": "a"}]).rules[0].reply == "a"
    assert load_script(empty) == Script()
    assert load_script(Script()) == Script()


def test_rules_can_be_built_in_python():
    rule = Rule(match={"last_message": "ping"}, reply="pong", times=2)

    script = load_script([rule, {"json": [1, 2]}])

    assert script.rules[0] is rule
    assert script.rules[1].has_json
    assert Rule(json=None).has_json
    assert not Rule().has_json


def test_a_python_rule_with_a_typo_raises_a_validation_error_with_the_hint():
    with pytest.raises(pydantic.ValidationError, match="did you mean 'reply'"):
        Rule(repy="x")


def issues_of(document: Any) -> tuple[str, ...]:
    with pytest.raises(ScriptError) as raised:
        load_script(document)
    return raised.value.issues


ERRORS = {
    "a misspelt key gets a suggestion": (
        {"rules": [{}, {}, {"match": {"last_message": {"contians": "x"}}}]},
        "rules[2].match.last_message: unknown key 'contians'; did you mean 'contains'?",
    ),
    "a key far from any gets the list": (
        {"rules": [{"zzz": 1}]},
        "rules[0]: unknown key 'zzz'; valid keys: reply, tool_calls, json, error, delay, "
        "token_delay, finish_reason, match, times",
    ),
    "a misspelt top-level key": (
        {"rule": []},
        "unknown key 'rule'; did you mean 'rules'?",
    ),
    "a bad regex": (
        [{"match": {"last_message": {"regex": "("}}}],
        "rules[0].match.last_message.regex: not a valid regular expression: missing ), "
        "unterminated subpattern at position 0",
    ),
    "an unknown placeholder": (
        [{"reply": "Hello {user}"}],
        "rules[0].reply: unknown placeholder '{user}'; the placeholders are {last_message} "
        "and {tool_result} (write '{{' or '}}' for a literal brace)",
    ),
    "attribute access in a placeholder": (
        [{"reply": "{last_message.__class__}"}],
        "rules[0].reply: unknown placeholder '{last_message.__class__}'; the placeholders "
        "are {last_message} and {tool_result} (write '{{' or '}}' for a literal brace)",
    ),
    "an unbalanced brace": (
        {"default": {"reply": "a { b"}},
        "default.reply: unbalanced brace; write '{{' or '}}' for a literal brace, or use "
        "{last_message} / {tool_result}",
    ),
    "an error with a reply": (
        [{"error": {"status": 500}, "reply": "x"}],
        "rules[0]: an error answers alone; remove reply",
    ),
    "json with tool calls": (
        [{"json": {}, "tool_calls": [{"name": "f"}]}],
        "rules[0]: json is the whole content; it cannot go with reply or tool_calls",
    ),
    "times below one": (
        [{"times": 0}],
        "rules[0].times: Input should be greater than or equal to 1",
    ),
    "an error status that is not an error": (
        [{"error": {"status": 200}}],
        "rules[0].error.status: Input should be greater than or equal to 400",
    ),
    "a tool call without a name": (
        [{"tool_calls": [{"arguments": {}}]}],
        "rules[0].tool_calls[0].name: required",
    ),
    "tool_result of the wrong type": (
        [{"match": {"tool_result": 1}}],
        "rules[0].match.tool_result: expected true, false or a tool name, got 1",
    ),
    "a script that is not a mapping": (
        "just text",
        None,
    ),
}


@pytest.mark.parametrize(("document", "issue"), ERRORS.values(), ids=ERRORS.keys())
def test_a_script_error_names_where_and_what(document, issue, tmp_path: Path):
    if isinstance(document, str):  # a file whose YAML is a plain string
        path = tmp_path / "text.yaml"
        path.write_text(document, encoding="utf-8")
        issue = "a script is a mapping with 'rules' (or a list of rules), not 'just text'"
        document = path

    assert issues_of(document) == (issue,)


def test_every_issue_is_reported_at_once():
    issues = issues_of([{"repl": "x"}, {"delay": -1}, {"reply": "{nope}"}])

    assert [issue.split(":")[0] for issue in issues] == [
        "rules[0]",
        "rules[1].delay",
        "rules[2].reply",
    ]


def test_a_script_error_message_names_the_file(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - replyy: x\n", encoding="utf-8")

    with pytest.raises(ScriptError) as raised:
        load_script(path)

    assert str(raised.value) == (
        f"invalid mock LLM script ({path}):\n"
        "  rules[0]: unknown key 'replyy'; did you mean 'reply'?"
    )
    assert raised.value.code == "invalid_mock_script"


def test_yaml_and_json_syntax_errors_are_located(tmp_path: Path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("rules:\n  - reply: [unclosed\n", encoding="utf-8")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"rules": [}', encoding="utf-8")

    (yaml_issue,) = issues_of(bad_yaml)
    (json_issue,) = issues_of(bad_json)

    assert yaml_issue.startswith("line 3, column 1: ")
    assert json_issue == "line 1, column 12: Expecting value"


def test_a_missing_file_is_a_script_error(tmp_path: Path):
    (issue,) = issues_of(tmp_path / "nowhere.yaml")

    assert issue == "cannot read the file: No such file or directory"


def test_model_ids_are_the_named_models_then_mock():
    script = load_script([{"match": {"model": "a"}}, {"match": {"model": "a"}}, {}])

    assert script.model_ids() == ["a", "mock"]


def test_the_documented_script_loads():
    page = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
    blocks = re.findall(r"^```yaml\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    (block,) = [b for b in blocks if b.startswith("api_key:")]  # the mock LLM script

    script = load_script(yaml.safe_load(block))

    assert len(script.rules) == 5
    assert script.api_key == "sk-test"
